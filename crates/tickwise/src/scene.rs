//! A stack of scenes: only the top one is active, and only active time runs.
//!
//! A pause menu pushed over the game stops the game's clock without touching
//! the game; popping the menu makes the game active again. The text dump,
//! `menu=paused,game=active`, is what tests and logs compare.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The deepest a stack may grow. Deeper stacks are a bug (a push in a loop),
/// so they are refused rather than allowed to grow without bound.
pub const MAX_SCENE_DEPTH: usize = 64;
/// The longest scene name, in bytes.
pub const MAX_SCENE_NAME: usize = 64;

/// One scene on the stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scene {
    name: String,
    active_ticks: u64,
}

impl Scene {
    /// The scene's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Ticks that ran while this scene was on top.
    #[must_use]
    pub const fn active_ticks(&self) -> u64 {
        self.active_ticks
    }
}

/// Why a scene operation was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SceneError {
    /// `pop` on an empty stack.
    Empty,
    /// A push beyond [`MAX_SCENE_DEPTH`].
    TooDeep,
    /// A name that is empty, longer than [`MAX_SCENE_NAME`], or contains a
    /// character other than ASCII letters, digits, `_`, `-` and `.` (the dump
    /// format uses `=` and `,`).
    InvalidName {
        /// The refused name.
        name: String,
    },
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SceneError::Empty => f.write_str("cannot pop: the scene stack is empty"),
            SceneError::TooDeep => write!(
                f,
                "cannot push: the scene stack already holds {MAX_SCENE_DEPTH} scenes"
            ),
            SceneError::InvalidName { name } => write!(
                f,
                "invalid scene name {name:?}: use 1 to {MAX_SCENE_NAME} ASCII letters, digits, '_', '-' or '.'"
            ),
        }
    }
}

impl core::error::Error for SceneError {}

/// A stack of named scenes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SceneStack {
    scenes: Vec<Scene>,
}

/// Whether `name` is a valid scene name.
#[must_use]
pub fn is_valid_scene_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_SCENE_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

impl SceneStack {
    /// An empty stack.
    #[must_use]
    pub const fn new() -> SceneStack {
        SceneStack { scenes: Vec::new() }
    }

    /// Pushes a scene; it becomes the only active one.
    ///
    /// # Errors
    ///
    /// [`SceneError::InvalidName`] or [`SceneError::TooDeep`].
    pub fn push(&mut self, name: &str) -> Result<(), SceneError> {
        if !is_valid_scene_name(name) {
            return Err(SceneError::InvalidName { name: name.into() });
        }
        if self.scenes.len() >= MAX_SCENE_DEPTH {
            return Err(SceneError::TooDeep);
        }
        self.scenes.push(Scene {
            name: name.into(),
            active_ticks: 0,
        });
        Ok(())
    }

    /// Pops the top scene; the one below becomes active.
    ///
    /// # Errors
    ///
    /// [`SceneError::Empty`] when there is nothing to pop.
    pub fn pop(&mut self) -> Result<Scene, SceneError> {
        self.scenes.pop().ok_or(SceneError::Empty)
    }

    /// The active (top) scene.
    #[must_use]
    pub fn active(&self) -> Option<&Scene> {
        self.scenes.last()
    }

    /// The scenes, bottom first.
    #[must_use]
    pub fn scenes(&self) -> &[Scene] {
        &self.scenes
    }

    /// Number of scenes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.scenes.len()
    }

    /// Whether the stack is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.scenes.is_empty()
    }

    /// Credits `ticks` of run time to the active scene only.
    pub fn run_ticks(&mut self, ticks: u64) {
        if let Some(top) = self.scenes.last_mut() {
            top.active_ticks = top.active_ticks.saturating_add(ticks);
        }
    }
}

impl fmt::Display for SceneStack {
    /// `name=state` pairs, bottom first, comma-separated; empty for an empty stack.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let last = self.scenes.len().wrapping_sub(1);
        for (i, s) in self.scenes.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let state = if i == last { "active" } else { "paused" };
            write!(f, "{}={state}", s.name)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn resume_rules_stack_dumps() {
        let mut s = SceneStack::new();
        s.push("menu").unwrap();
        s.push("game").unwrap();
        assert_eq!(s.to_string(), "menu=paused,game=active");
        s.push("popup").unwrap();
        assert_eq!(s.to_string(), "menu=paused,game=paused,popup=active");
        assert_eq!(s.pop().unwrap().name(), "popup");
        assert_eq!(s.to_string(), "menu=paused,game=active");
        s.pop().unwrap();
        s.pop().unwrap();
        assert_eq!(s.to_string(), "");
        assert_eq!(s.pop(), Err(SceneError::Empty));
    }

    #[test]
    fn only_active_scene_time_runs() {
        let mut s = SceneStack::new();
        s.push("game").unwrap();
        s.run_ticks(10);
        s.push("menu").unwrap();
        s.run_ticks(5);
        s.pop().unwrap();
        s.run_ticks(1);
        assert_eq!(s.active().unwrap().active_ticks(), 11);
    }

    #[test]
    fn bad_names_and_depth_are_refused() {
        let mut s = SceneStack::new();
        for bad in ["", "a=b", "a,b", "has space", &"x".repeat(65)] {
            assert!(
                matches!(s.push(bad), Err(SceneError::InvalidName { .. })),
                "{bad:?}"
            );
        }
        for _ in 0..MAX_SCENE_DEPTH {
            s.push("x").unwrap();
        }
        assert_eq!(s.push("x"), Err(SceneError::TooDeep));
        assert_eq!(s.len(), MAX_SCENE_DEPTH);
    }
}
