! Error path: bspsettagsize with -4 on process 0, superstep 0.
program err_set_tagsize_negative
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: tagsz
  call bspbegin(bspnprocs())
  tagsz = -4
  if (bsppid() == 0) call bspsettagsize(tagsz) ! ERROR
  call bspsync()
  call bspend()
end program err_set_tagsize_negative
