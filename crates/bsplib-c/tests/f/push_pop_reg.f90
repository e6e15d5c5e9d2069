! bsppushreg, bsppopreg: a newer registration of the same array hides
! the older one (its size decides the bounds), popping it brings the
! older one back; bspunregistered registers nothing on process 0, and
! the others still reach each other through that slot.
program push_pop_reg
  implicit none
  include 'fbsp.h'
  integer :: p, s, a(4), b(2)
  call bspbegin(bspnprocs())
  p = bspnprocs()
  s = bsppid()
  a = -1
  b = -1
  call bsppushreg(a, 4 * BSPINT)
  call bsppushreg(a, 2 * BSPINT)
  call bspsync()
  call bspput(mod(s + 1, p), s, a, BSPINT, BSPINT)
  call bspsync()
  call checki(a(2), mod(s + p - 1, p), 'a(2) through the newer slot')
  call bsppopreg(a)
  call bspsync()
  call bspput(mod(s + 1, p), s, a, 3 * BSPINT, BSPINT)
  call bspsync()
  call checki(a(4), mod(s + p - 1, p), 'a(4) through the older slot')
  if (s == 0) then
    call bsppushreg(bspunregistered, 0)
  else
    call bsppushreg(b, 2 * BSPINT)
  end if
  call bspsync()
  if (s > 0 .and. p > 2) call bspput(1 + mod(s, p - 1), s, b, BSPINT, BSPINT)
  call bspsync()
  if (s > 0 .and. p > 2) call checki(b(2), 1 + mod(s + p - 3, p - 1), 'b(2) past process 0')
  if (s == 0) then
    call bsppopreg(bspunregistered)
  else
    call bsppopreg(b)
  end if
  call bsppopreg(a)
  call bspsync()
  call reportok()
  call bspend()
end program push_pop_reg

include 'fcheck.inc'
