! Error path: bspsync after bspend, on process 0 (which continues alone
! after bspend): a call outside the run.
program err_sync_after_end
  implicit none
  integer, external :: bspnprocs
  call bspbegin(bspnprocs())
  call bspsync()
  call bspend()
  call bspsync() ! ERROR
end program err_sync_after_end
