! Error path: process 1 pushes two registrations where the others push
! one; the sync that ends superstep 0 finds it and names the push.
program err_push_reg_mismatch
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: a(2), b(2)
  call bspbegin(bspnprocs())
  call bsppushreg(a, 8)
  if (bsppid() == 1) call bsppushreg(b, 8) ! ERROR
  call bspsync()
  call bspend()
end program err_push_reg_mismatch
