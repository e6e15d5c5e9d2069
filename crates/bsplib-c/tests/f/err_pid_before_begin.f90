! Error path: bsppid before bspbegin: a call outside the run.
program err_pid_before_begin
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: s
  s = bsppid() ! ERROR
  call bspbegin(bspnprocs())
  call bspend()
end program err_pid_before_begin
