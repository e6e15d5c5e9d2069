! Error path: bsphpput to pid p (pids count from 0 to p-1, also in
! Fortran) on process 0, superstep 1.
program err_hpput_pid_out_of_range
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2)
  call bspbegin(bspnprocs())
  call bsppushreg(a, 8)
  call bspsync()
  if (bsppid() == 0) call bsphpput(bspnprocs(), a, a, 0, 4) ! ERROR
  call bspsync()
  call bspend()
end program err_hpput_pid_out_of_range
