! bspbegin, bspend, bspnprocs, bsppid: SPMD mode, bspbegin the first
! statement. Before bspbegin bspnprocs is the processes available; in the
! run every pid 0..p-1 appears once (each process puts a flag into
! process 0's array).
program begin_end
  implicit none
  integer, external :: bspnprocs, bsppid, expectednprocs
  integer :: p, s, i, flags(8)
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  call checki(p, expectednprocs(), 'bspnprocs()')
  call check(s >= 0 .and. s < p, 'pid in 0..p-1')
  flags = 0
  call bsppushreg(flags, 8 * 4)
  call bspsync()
  call bspput(0, 1, flags, s * 4, 4)
  call bspsync()
  if (s == 0) then
    do i = 1, p
      call checki(flags(i), 1, 'flag of a pid')
    end do
    do i = p + 1, 8
      call checki(flags(i), 0, 'flag past p')
    end do
  end if
  call bsppopreg(flags)
  call bspsync()
  call reportok()
  call bspend()
end program begin_end

include 'fcheck.inc'
