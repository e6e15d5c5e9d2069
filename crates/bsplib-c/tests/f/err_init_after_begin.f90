! Error path: bspinit after bspbegin (process 0, superstep 1).
program err_init_after_begin
  implicit none
  integer, external :: bspnprocs, bsppid
  external :: nothing
  call bspbegin(bspnprocs())
  call bspsync()
  if (bsppid() == 0) call bspinit(nothing) ! ERROR
  call bspsync()
  call bspend()
end program err_init_after_begin

subroutine nothing()
end subroutine nothing
