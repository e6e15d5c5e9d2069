! bsphpput: unbuffered; the data is in place after the sync.
program hpput
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: p, s, src(3), dst(3)
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  dst = -1
  src = (/ s, 2 * s, 3 * s /)
  call bsppushreg(dst, 3 * 4)
  call bspsync()
  call bsphpput(mod(s + 1, p), src, dst, 4, 2 * 4)
  call bspsync()
  call checki(dst(1), -1, 'dst(1)')
  call checki(dst(2), mod(s + p - 1, p), 'dst(2)')
  call checki(dst(3), 2 * mod(s + p - 1, p), 'dst(3)')
  call bsppopreg(dst)
  call bspsync()
  call reportok()
  call bspend()
end program hpput

include 'fcheck.inc'
