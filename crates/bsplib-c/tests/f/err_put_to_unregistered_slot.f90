! Error path: process 1 puts into process 0's area of a slot where
! process 0 registered bspunregistered (NULL): superstep 1.
program err_put_to_unregistered_slot
  implicit none
  include 'fbsp.h'
  integer :: a(2)
  call bspbegin(bspnprocs())
  if (bsppid() == 0) then
    call bsppushreg(bspunregistered, 0)
  else
    call bsppushreg(a, 8)
  end if
  call bspsync()
  if (bsppid() == 1) call bspput(0, a, a, 0, 4) ! ERROR
  call bspsync()
  call bspend()
end program err_put_to_unregistered_slot
