! Error path: bspmove on an empty queue (process 0, superstep 1).
program err_move_empty_queue
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: x
  call bspbegin(bspnprocs())
  call bspsync()
  if (bsppid() == 0) call bspmove(x, 4) ! ERROR
  call bspsync()
  call bspend()
end program err_move_empty_queue
