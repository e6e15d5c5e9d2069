! Error path: bsphpget of -1 bytes on process 0, superstep 2.
program err_hpget_negative_nbytes
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2)
  call bspbegin(bspnprocs())
  call bsppushreg(a, 8)
  call bspsync()
  call bspsync()
  if (bsppid() == 0) call bsphpget(bspnprocs() - 1, a, 0, a, -1) ! ERROR
  call bspsync()
  call bspend()
end program err_hpget_negative_nbytes
