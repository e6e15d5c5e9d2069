//! The set-ups of the layers above the transport (the profiler's, the
//! checking mode's, the machine parameters, the progress view), kept for
//! the run and across the fork without the transport knowing them.

use super::World;

/// Slots of [`World::ext`]: one per type of set-up kept for a run.
pub(super) const EXT_SLOTS: usize = 4;

impl World {
    /// Keeps `value`, the run's one value of its type (a set-up of a
    /// layer above: the profiler's, the checking mode's), for every
    /// process; a second value of a type is ignored.
    pub(crate) fn set_ext<T: std::any::Any + Send + std::marker::Sync>(&self, value: T) {
        let _ = self.ext_or_init(|| value);
    }

    /// The run's value of type `T`, if one was set.
    #[inline]
    pub(crate) fn ext<T: std::any::Any + Send + std::marker::Sync>(&self) -> Option<&T> {
        self.ext
            .iter()
            .map_while(|s| s.get())
            .find_map(|b| b.downcast_ref::<T>())
    }

    /// The run's value of type `T`, made by `init` on first use (once, for
    /// every process: concurrent first uses wait for one `init`).
    pub(crate) fn ext_or_init<T: std::any::Any + Send + std::marker::Sync>(
        &self,
        init: impl FnOnce() -> T,
    ) -> &T {
        if let Some(v) = self.ext::<T>() {
            return v;
        }
        let _one = self.ext_init.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = self.ext::<T>() {
            return v;
        }
        let slot = self
            .ext
            .iter()
            .find(|s| s.get().is_none())
            .expect("more extension set-ups than World::ext has slots");
        let _ = slot.set(Box::new(init()));
        self.ext::<T>().expect("just set")
    }

    /// Turns the progress view on for this run (`force`: even when
    /// standard error is not a terminal).
    pub(crate) fn set_progress(&self, force: bool) {
        let _ = self.progress.set(force);
    }

    /// `Some(force)` if the run shows its progress.
    pub(crate) fn progress(&self) -> Option<bool> {
        self.progress.get().copied()
    }
}
