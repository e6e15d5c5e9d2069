! The paper's reverse: process i ends with the x of process p-1-i. Local
! variables of a subroutine, registered and put into in the same call.
program reverse_test
  implicit none
  integer, external :: bspnprocs, bsppid, reverse
  call bspbegin(bspnprocs())
  call checki(reverse(10 * bsppid()), 10 * (bspnprocs() - 1 - bsppid()), 'reverse(x)')
  call reportok()
  call bspend()
end program reverse_test

integer function reverse(xin)
  implicit none
  integer, intent(in) :: xin
  integer, external :: bspnprocs, bsppid
  integer :: x
  x = xin
  call bsppushreg(x, 4)
  call bspsync()
  call bspput(bspnprocs() - bsppid() - 1, x, x, 0, 4)
  call bspsync()
  call bsppopreg(x)
  reverse = x
end function reverse

include 'fcheck.inc'
