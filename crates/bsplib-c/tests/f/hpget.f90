! bsphpget: unbuffered; the data is in place after the sync.
program hpget
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: p, s, src(3), dst(3)
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  dst = -1
  src = (/ 7 * s, 8 * s, 9 * s /)
  call bsppushreg(src, 3 * 4)
  call bspsync()
  call bsphpget(mod(s + 1, p), src, 4, dst, 2 * 4)
  call bspsync()
  call checki(dst(1), 8 * mod(s + 1, p), 'dst(1)')
  call checki(dst(2), 9 * mod(s + 1, p), 'dst(2)')
  call checki(dst(3), -1, 'dst(3)')
  call bsppopreg(src)
  call bspsync()
  call reportok()
  call bspend()
end program hpget

include 'fcheck.inc'
