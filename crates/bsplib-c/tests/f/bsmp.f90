! bspsend, bspqsize, bspgettag, bspmove: every process sends one message
! (tag: its pid; payload: pid+1 REAL*8 values) to every process; each
! counts p messages, payload bytes 8*(1+..+p), and checks each one;
! bspgettag on the empty queue gives -1 and leaves the tag alone.
program bsmp
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: p, s, i, j, tagsz, n, nbytes, status, tag, seen(8)
  real*8 :: payload(8), got(8)
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  tagsz = 4
  call bspsettagsize(tagsz)
  call bspsync()
  do j = 1, s + 1
    payload(j) = 100d0 * s + j
  end do
  do i = 0, p - 1
    call bspsend(i, s, payload, (s + 1) * 8)
  end do
  payload = -1d0
  call bspsync()
  call bspqsize(n, nbytes)
  call checki(n, p, 'messages in the queue')
  call checki(nbytes, 8 * p * (p + 1) / 2, 'payload bytes in the queue')
  seen = 0
  do i = 1, p
    call bspgettag(status, tag)
    call check(tag >= 0 .and. tag < p, 'the tag is a pid')
    call checki(status, (tag + 1) * 8, 'status (payload bytes)')
    got = 0d0
    call bspmove(got, status)
    do j = 1, tag + 1
      call check(got(j) == 100d0 * tag + j, 'payload value')
    end do
    seen(tag + 1) = seen(tag + 1) + 1
    call bspqsize(n, nbytes)
    call checki(n, p - i, 'messages left')
  end do
  do i = 1, p
    call checki(seen(i), 1, 'one message from each pid')
  end do
  tag = 99
  call bspgettag(status, tag)
  call checki(status, -1, 'status on an empty queue')
  call checki(tag, 99, 'the tag on an empty queue')
  call reportok()
  call bspend()
end program bsmp

include 'fcheck.inc'
