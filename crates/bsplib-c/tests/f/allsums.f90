! The manual page's allsums: running sums in log p supersteps; process i
! prints "y=<i+1> sums=<1+..+(i+1)>".
program allsums_test
  implicit none
  integer, external :: bspnprocs, bsppid, allsums
  integer :: y, r
  call bspbegin(bspnprocs())
  y = bsppid() + 1
  r = allsums(y)
  write (*, '(a,i0,a,i0)') 'y=', y, ' sums=', r
  call bspend()
end program allsums_test

integer function allsums(x)
  implicit none
  integer, intent(in) :: x
  integer, external :: bspnprocs, bsppid
  integer :: i, left, right
  call bsppushreg(right, 4)
  call bspsync()
  right = x
  i = 1
  do while (i < bspnprocs())
    if (bsppid() >= i) call bspget(bsppid() - i, right, 0, left, 4)
    call bspsync()
    if (bsppid() >= i) right = left + right
    i = 2 * i
  end do
  call bsppopreg(right)
  allsums = right
end function allsums
