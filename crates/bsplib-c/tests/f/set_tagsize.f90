! bspsettagsize: INOUT, it returns the previous size in its argument;
! the new size applies from the next superstep, to the messages sent then.
program set_tagsize
  implicit none
  integer, external :: bspnprocs, bsppid
  integer :: s, tagsz, status, tag(2)
  call bspbegin(bspnprocs())
  s = bsppid()
  tagsz = 8
  call bspsettagsize(tagsz)
  call checki(tagsz, 0, 'the previous tag size (the first)')
  tagsz = 4
  call bspsettagsize(tagsz)
  call checki(tagsz, 8, 'the previous tag size (set in this superstep)')
  call bspsync()
  call bspsend(s, (/ 1000 + s, 77 /), 0, 0)
  call bspsync()
  tag = -1
  call bspgettag(status, tag)
  call checki(status, 0, 'status (the payload length)')
  call checki(tag(1), 1000 + s, 'tag(1)')
  call checki(tag(2), -1, 'tag(2): the tag is 4 bytes')
  call bspmove(tag, 0)
  call reportok()
  call bspend()
end program set_tagsize

include 'fcheck.inc'
