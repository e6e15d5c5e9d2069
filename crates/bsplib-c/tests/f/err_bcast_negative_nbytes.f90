! Error path: bspbcast of -4 bytes on process 0, superstep 1 (the others
! wait in bspsync).
program err_bcast_negative_nbytes
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2)
  call bspbegin(bspnprocs())
  call bspsync()
  if (bsppid() == 0) then
    call bspbcast(0, a, a, -4) ! ERROR
  else
    call bspsync()
  end if
  call bspend()
end program err_bcast_negative_nbytes
