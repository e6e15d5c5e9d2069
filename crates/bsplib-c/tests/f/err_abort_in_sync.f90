! Error path: process 1 aborts while the others wait in bspsync; the
! message reaches stderr and no process hangs.
program err_abort_in_sync
  implicit none
  integer, external :: bspnprocs, bsppid
  call bspbegin(bspnprocs())
  call bspsync()
  if (bsppid() == 1) call bspabort('process 1 aborts while the others wait in bspsync') ! ERROR
  call bspsync()
  call bspend()
end program err_abort_in_sync
