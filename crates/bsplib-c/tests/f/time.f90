! bsptime: a DOUBLE PRECISION, non-negative, never decreasing, and it
! sees a wait of 20 ms.
program time
  implicit none
  integer, external :: bspnprocs
  double precision, external :: bsptime
  double precision :: t0, t1
  integer :: count0, count1, rate
  call bspbegin(bspnprocs())
  t0 = bsptime()
  call check(t0 >= 0d0, 'bsptime() >= 0')
  call system_clock(count0, rate)
  do
    call system_clock(count1)
    if (dble(count1 - count0) / dble(rate) >= 0.02d0) exit
  end do
  t1 = bsptime()
  call check(t1 - t0 >= 0.019d0, 'bsptime() saw the 20 ms wait')
  call bspsync()
  call check(bsptime() >= t1, 'bsptime() never decreases')
  call reportok()
  call bspend()
end program time

include 'fcheck.inc'
