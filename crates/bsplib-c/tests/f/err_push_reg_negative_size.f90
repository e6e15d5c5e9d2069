! Error path: bsppushreg with a negative size on process 0, superstep 0.
program err_push_reg_negative_size
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2)
  call bspbegin(bspnprocs())
  if (bsppid() == 0) call bsppushreg(a, -8) ! ERROR
  call bspsync()
  call bspend()
end program err_push_reg_negative_size
