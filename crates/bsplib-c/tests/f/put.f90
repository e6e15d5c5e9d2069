! bspput: buffered on source (the source may change right after the
! call) and on destination (lands at the sync, also to oneself), byte
! offsets from 0, zero bytes do nothing; a REAL*8 array in one call and an
! INTEGER scalar in the next, as the paper's <TYPE> arguments allow.
program put
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: p, s, right, left, v, ibox(3), i
  real*8 :: src(5), dst(5)
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  right = mod(s + 1, p)
  left = mod(s + p - 1, p)
  dst = 0d0
  ibox = -1
  call bsppushreg(dst, 5 * 8)
  call bsppushreg(ibox, 3 * 4)
  call bspsync()
  do i = 1, 5
    src(i) = 10d0 * s + i
  end do
  call bspput(right, src(2), dst, 8, 3 * 8)
  src = -1d0
  v = 1000 + s
  call bspput(right, v, ibox, 0, 4)
  v = -5
  call bspput(s, s, ibox, 8, 4)
  call bspput(right, v, ibox, 4, 0)
  call checki(ibox(3), -1, 'a put to oneself before the sync')
  call bspsync()
  call check(dst(1) == 0d0 .and. dst(5) == 0d0, 'dst(1) and dst(5) untouched')
  do i = 2, 4
    call check(dst(i) == 10d0 * left + i, 'dst(2:4) from the left neighbour')
  end do
  call checki(ibox(1), 1000 + left, 'ibox(1)')
  call checki(ibox(2), -1, 'ibox(2) after a zero-byte put')
  call checki(ibox(3), s, 'ibox(3) put to oneself')
  call bsppopreg(ibox)
  call bsppopreg(dst)
  call bspsync()
  call reportok()
  call bspend()
end program put

include 'fcheck.inc'
