! Error path: bspget from an array that is not registered (process 0,
! superstep 1).
program err_get_unregistered
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2), b(2)
  call bspbegin(bspnprocs())
  call bsppushreg(a, 8)
  call bspsync()
  if (bsppid() == 0) call bspget(0, b, 0, a, 4) ! ERROR
  call bspsync()
  call bspend()
end program err_get_unregistered
