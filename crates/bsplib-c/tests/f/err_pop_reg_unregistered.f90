! Error path: bsppopreg of an array never registered (process 0,
! superstep 1).
program err_pop_reg_unregistered
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2), b(2)
  call bspbegin(bspnprocs())
  call bsppushreg(a, 8)
  call bspsync()
  if (bsppid() == 0) call bsppopreg(b) ! ERROR
  call bspsync()
  call bspend()
end program err_pop_reg_unregistered
