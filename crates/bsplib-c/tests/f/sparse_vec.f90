! The paper's all_gather_sparse_vec (BSMP): the nonzeros of a block
! distributed vector are broadcast as messages tagged with their global
! index (from 0). Element g is g+0.5 when g is a multiple of 3, else 0.
program sparse_vec
  implicit none
  integer, external :: bspnprocs, bsppid, gather
  integer, parameter :: noverp = 7
  real :: dense(noverp), sparse(100)
  integer :: ivec(100), seen(0:99), i, g, n, nonzeros, expected
  call bspbegin(bspnprocs())
  n = noverp * bspnprocs()
  do i = 1, noverp
    g = bsppid() * noverp + i - 1
    dense(i) = merge(real(g) + 0.5, 0.0, mod(g, 3) == 0)
  end do
  expected = (n + 2) / 3
  nonzeros = gather(dense, noverp, sparse, ivec)
  call checki(nonzeros, expected, 'nonzeros')
  seen = 0
  do i = 1, nonzeros
    g = ivec(i)
    call check(g >= 0 .and. g < n .and. mod(g, 3) == 0, 'global index')
    call check(sparse(i) == real(g) + 0.5, 'value')
    call checki(seen(g), 0, 'seen once')
    seen(g) = 1
  end do
  call bspsync()
  call reportok()
  call bspend()
end program sparse_vec

integer function gather(dense, noverp, sparse, ivec)
  implicit none
  integer :: noverp, ivec(*)
  real :: dense(noverp), sparse(*)
  integer, external :: bspnprocs, bsppid
  integer :: globalidx, i, j, tagsize, nonzeros, nbytes, status
  tagsize = 4
  call bspsettagsize(tagsize)
  call bspsync()
  do i = 1, noverp
    if (dense(i) /= 0.0) then
      globalidx = noverp * bsppid() + i - 1
      do j = 0, bspnprocs() - 1
        call bspsend(j, globalidx, dense(i), 4)
      end do
    end if
  end do
  call bspsync()
  call bspqsize(nonzeros, nbytes)
  do i = 1, nonzeros
    call bspgettag(status, ivec(i))
    if (status /= 4) call bspabort('gather: a payload is not one REAL')
    call bspmove(sparse(i), 4)
  end do
  call bspsettagsize(tagsize)
  gather = nonzeros
end function gather

include 'fcheck.inc'
