! bspget: reads the value the source has at the end of the superstep
! (after the owner's later assignment), at byte offsets from 0, into
! any element of a local array.
program get
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: p, s, left, a(4), got(4)
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  left = mod(s + p - 1, p)
  a = 0
  got = -1
  call bsppushreg(a, 4 * 4)
  call bspsync()
  call bspget(left, a, 2 * 4, got(3), 2 * 4)
  a(3) = 30 + s
  a(4) = 40 + s
  call checki(got(3), -1, 'got(3) before the sync')
  call bspsync()
  call checki(got(1), -1, 'got(1)')
  call checki(got(3), 30 + left, 'got(3)')
  call checki(got(4), 40 + left, 'got(4)')
  call bsppopreg(a)
  call bspsync()
  call reportok()
  call bspend()
end program get

include 'fcheck.inc'
