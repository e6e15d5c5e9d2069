//! Views of a process's own window memory: [`Window::local`] and
//! [`Window::local_mut`] and their guards [`Local`] and [`LocalMut`], each
//! holding the lock of that memory (MPI asks the same of local loads and
//! stores).

use std::ops::{Deref, DerefMut};

use bytemuck::Pod;

use super::Window;
use crate::bsp::Bsp;
use crate::error::{Error, SourceLocation};
use crate::holds::Held;
use crate::process::Loc;

impl<T: Pod> Window<T> {
    /// This process's own memory, to read: a shared lock of it, held
    /// until the view drops (remote writers wait meanwhile).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ForeignArea`](crate::ErrorKind::ForeignArea);
    /// [`ErrorKind::Stopped`](crate::ErrorKind::Stopped) if the run
    /// stops while this process waits for a remote writer.
    ///
    /// # BSP cost
    ///
    /// None: a lock of one's own memory.
    ///
    /// # Examples
    ///
    /// See [`Window`].
    #[track_caller]
    pub fn local<'a>(&'a self, bsp: &'a Bsp) -> Result<Local<'a, T>, Error> {
        const CALL: &str = "Window::local";
        let loc = Some(SourceLocation::caller());
        let me = self.owner.1;
        self.view(bsp, false, CALL, loc)?;
        // SAFETY: our own memory, `len` elements of `T` (aligned: the data
        // starts a multiple of 64 bytes into a 64-byte aligned block on shared
        // memory, and MPI's allocations are aligned for any basic type),
        // read-locked until the view drops: nobody writes it meanwhile.
        let data = unsafe { std::slice::from_raw_parts(self.data(me).cast::<T>(), self.len()) };
        Ok(Local {
            data,
            hold: Hold {
                win: self,
                bsp,
                exclusive: false,
            },
        })
    }

    /// This process's own memory, to read and write: an exclusive lock of
    /// it, held until the view drops (every remote access waits
    /// meanwhile).
    ///
    /// # Errors
    ///
    /// As for [`local`](Window::local).
    ///
    /// # BSP cost
    ///
    /// None: a lock of one's own memory.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = bsplib::run(2, |bsp| {
    ///     let mut w = bsplib::Window::<u32>::new(bsp, 2)?;
    ///     w.local_mut(bsp)?.copy_from_slice(&[7, bsp.pid() as u32]);
    ///     bsp.sync()?;
    ///     let other = (bsp.pid() + 1) % 2;
    ///     let mut got = [0u32; 2];
    ///     w.lock(bsp, other, bsplib::LockKind::Shared)?.get(0, &mut got)?;
    ///     bsp.sync()?;
    ///     w.free(bsp)?;
    ///     Ok(got)
    /// })?;
    /// assert_eq!(r, [[7, 1], [7, 0]]);
    /// # Ok::<(), bsplib::Error>(())
    /// ```
    #[track_caller]
    pub fn local_mut<'a>(&'a mut self, bsp: &'a Bsp) -> Result<LocalMut<'a, T>, Error> {
        const CALL: &str = "Window::local_mut";
        let loc = Some(SourceLocation::caller());
        let me = self.owner.1;
        self.view(bsp, true, CALL, loc)?;
        // SAFETY: as in `local`, write-locked until the view drops: nobody
        // else reads or writes it meanwhile.
        let data = unsafe { std::slice::from_raw_parts_mut(self.data(me).cast::<T>(), self.len()) };
        Ok(LocalMut {
            data,
            hold: Hold {
                win: self,
                bsp,
                exclusive: true,
            },
        })
    }

    /// Opens a view of this process's own memory (`exclusive`: to write)
    /// and counts it; the first of the shared views takes the shared lock
    /// of it, the others share that (on `mpi` a rank cannot lock its own
    /// window twice).
    fn view(&self, bsp: &Bsp, exclusive: bool, call: &'static str, loc: Loc) -> Result<(), Error> {
        self.own(bsp, call, loc)?;
        let mut p = bsp.process();
        p.held_refuses(p.holds.check_view(p.pid, self.id, exclusive), call, loc)?;
        let me = self.owner.1;
        if exclusive {
            self.acquire(&p, me, true, call, loc)?;
            self.sync_local(&p, call, loc)?;
            p.holds.open(
                Held::View {
                    win: self.id,
                    exclusive: true,
                    count: 1,
                },
                call,
                loc,
            );
            return Ok(());
        }
        let n = p.holds.views(self.id).map_or(0, |(_, n)| n);
        if n == 0 {
            self.acquire(&p, me, false, call, loc)?;
            self.sync_local(&p, call, loc)?;
        }
        p.holds.set_shared_views(self.id, n + 1, call, loc);
        Ok(())
    }

    /// Closes a view [`view`](Window::view) opened.
    fn unview(&self, bsp: &Bsp, exclusive: bool) {
        let me = self.owner.1;
        let mut p = bsp.process();
        if exclusive {
            p.holds.close(&Held::View {
                win: self.id,
                exclusive: true,
                count: 1,
            });
            let _ = self.sync_local(&p, "the drop of a window view", None);
            self.release(&p, me, true);
            return;
        }
        let n = p.holds.views(self.id).map_or(0, |(_, n)| n);
        p.holds
            .set_shared_views(self.id, n.saturating_sub(1), "", None);
        if n == 1 {
            self.release(&p, me, false);
        }
    }
}

/// A counted view of this process's own memory, closed on drop.
struct Hold<'a, T: Pod> {
    win: &'a Window<T>,
    bsp: &'a Bsp,
    exclusive: bool,
}

impl<T: Pod> Drop for Hold<'_, T> {
    fn drop(&mut self) {
        self.win.unview(self.bsp, self.exclusive);
    }
}

/// A read view of this process's own window memory
/// ([`Window::local`]), holding a shared lock of it.
pub struct Local<'a, T: Pod> {
    data: &'a [T],
    hold: Hold<'a, T>,
}

impl<T: Pod> Deref for Local<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.data
    }
}

impl<T: Pod> std::fmt::Debug for Local<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local")
            .field("pid", &self.hold.win.owner.1)
            .field("len", &self.data.len())
            .finish()
    }
}

/// A read-write view of this process's own window memory
/// ([`Window::local_mut`]), holding an exclusive lock of it.
pub struct LocalMut<'a, T: Pod> {
    data: &'a mut [T],
    hold: Hold<'a, T>,
}

impl<T: Pod> Deref for LocalMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.data
    }
}

impl<T: Pod> DerefMut for LocalMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.data
    }
}

impl<T: Pod> std::fmt::Debug for LocalMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMut")
            .field("pid", &self.hold.win.owner.1)
            .field("len", &self.data.len())
            .finish()
    }
}
