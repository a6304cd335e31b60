//! The operations `git par bench` measures, as `--operations` names them: the vocabulary the contenders
//! (which command line does each operation) and the experiment (which cases each operation makes) share,
//! defined apart from both so that neither imports the other for it.

/// What is measured, as `--operations` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Switch a work tree of `main` to each `diff-N` branch: only the N changed files are written.
    Switch,
    /// Create a linked work tree of `main`: every file is written.
    WorktreeAdd,
    /// Clone the repository locally and check out `main`: objects are linked or copied, every file written.
    Clone,
    /// `status --porcelain` in a work tree of `main` with 2,000 files touched and 200 edited.
    Status,
    /// `update-index -q --refresh` (git) / `refresh -q` (git-par) in that work tree.
    Refresh,
}

impl Operation {
    /// Every operation, in the order a default run measures them.
    pub const ALL: [Self; 3] = [Self::Switch, Self::WorktreeAdd, Self::Clone];

    /// Returns the name in tables and result files, as git spells the command.
    pub fn title(self) -> &'static str {
        match self {
            Self::Switch => "switch",
            Self::WorktreeAdd => "worktree add",
            Self::Clone => "clone",
            Self::Status => "status",
            Self::Refresh => "refresh",
        }
    }

    /// Every operation `--operations` accepts.
    pub const NAMED: [Self; 5] = [
        Self::Switch,
        Self::WorktreeAdd,
        Self::Clone,
        Self::Status,
        Self::Refresh,
    ];

    /// Returns the name on the command line and in the `{op}` placeholder, without blanks.
    pub fn cli_name(self) -> &'static str {
        match self {
            Self::Switch => "switch",
            Self::WorktreeAdd => "worktree-add",
            Self::Clone => "clone",
            Self::Status => "status",
            Self::Refresh => "refresh",
        }
    }
}

impl std::str::FromStr for Operation {
    type Err = String;

    /// Parses a name of `--operations` ([`Operation::cli_name`]).
    fn from_str(s: &str) -> Result<Self, String> {
        Self::NAMED
            .into_iter()
            .find(|op| op.cli_name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMED.iter().map(|op| op.cli_name()).collect();
                format!("unknown operation `{s}`: choose among {}", names.join(", "))
            })
    }
}
