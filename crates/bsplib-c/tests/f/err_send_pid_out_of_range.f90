! Error path: bspsend to pid -1 on process 0, superstep 1.
program err_send_pid_out_of_range
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: x
  call bspbegin(bspnprocs())
  call bspsync()
  x = 1
  if (bsppid() == 0) call bspsend(-1, x, x, 4) ! ERROR
  call bspsync()
  call bspend()
end program err_send_pid_out_of_range
