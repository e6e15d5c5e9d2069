! Error path: bspput past the end of the registered area (process 1,
! superstep 1). The faulty call is marked ERROR; the expected routine,
! process and superstep are in the table of tests/fortran.rs.
program err_put_out_of_bounds
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2)
  call bspbegin(bspnprocs())
  call bsppushreg(a, 8)
  call bspsync()
  if (bsppid() == 1) call bspput(0, a, a, 4, 8) ! ERROR
  call bspsync()
  call bspend()
end program err_put_out_of_bounds
