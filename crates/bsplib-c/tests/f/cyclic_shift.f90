! The manual page's cyclic shift with bspget: every process gets the x
! of its left neighbour; then the same with bspput to the right one.
program cyclic_shift
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: x, p, s, left
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  left = mod(s + p - 1, p)
  x = 7 * s
  call bsppushreg(x, 4)
  call bspsync()
  call bspget(left, x, 0, x, 4)
  call bspsync()
  call checki(x, 7 * left, 'x got from the left')
  call bspput(mod(s + 1, p), x, x, 0, 4)
  call bspsync()
  call checki(x, 7 * mod(left + p - 1, p), 'x put from the left')
  call bsppopreg(x)
  call reportok()
  call bspend()
end program cyclic_shift

include 'fcheck.inc'
