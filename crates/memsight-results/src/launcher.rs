//! Who am I in the fleet: rank and size from the launcher's environment, as Slurm's `srun`, Open
//! MPI's `mpirun` and MPICH's Hydra `mpiexec` set it for every process they start. No MPI library
//! is linked: the variables are the launchers' documented interface, so one binary works under all
//! of them.
//!
//! What is refused (each one line naming the fix) is the classic silent failure: a process that
//! believes it is alone, or rank 0, while the launcher started many — inside a Slurm job but not in
//! an `srun` step, a size-1 step in a job of many nodes, ranks that disagree, a rank outside its
//! size.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use memsight_core::Error;

/// The launcher whose variables named the rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Launcher {
    /// Open MPI's `mpirun` (`OMPI_COMM_WORLD_*`).
    OpenMpi,
    /// MPICH / Intel MPI Hydra (`PMI_RANK`, `PMI_SIZE`).
    Mpich,
    /// Slurm's `srun` (`SLURM_PROCID`, `SLURM_STEP_NUM_TASKS`).
    Slurm,
    /// None: a fleet of one (results gathered by other means).
    None,
}

/// This process's place in the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Place {
    pub launcher: Launcher,
    pub rank: usize,
    pub size: usize,
    /// Processes the launcher started on this node (when it says).
    pub local_size: Option<usize>,
    /// The launcher's job identifier, naming the fleet's subdirectory.
    pub job: Option<String>,
}

fn num(get: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<usize>, Error> {
    match get(name) {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            Error::input(format!(
                "the launcher set {name}={v:?}, which is not a number: memsight cannot tell its rank"
            ))
        }),
    }
}

/// Slurm's per-node task count: `SLURM_TASKS_PER_NODE` is `3`, `2(x4)` or `2(x3),1`; the
/// first figure is this node's when every node has the same, and the one of node `SLURM_NODEID`.
fn slurm_local(get: &dyn Fn(&str) -> Option<String>) -> Option<usize> {
    let spec = get("SLURM_TASKS_PER_NODE")?;
    let node: usize = get("SLURM_NODEID")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut i = 0;
    for part in spec.split(',') {
        let (n, reps) = match part.split_once("(x") {
            Some((n, r)) => (n, r.trim_end_matches(')').parse().ok()?),
            None => (part, 1usize),
        };
        if node < i + reps {
            return n.parse().ok();
        }
        i += reps;
    }
    None
}

/// Reads rank and size from the environment (`get` is `std::env::var` in the binary, a map in
/// tests). MPI launchers win over Slurm: `mpirun` inside a Slurm allocation starts its own world.
pub fn detect(get: &dyn Fn(&str) -> Option<String>) -> Result<Place, Error> {
    let slurm_job = get("SLURM_JOB_ID");
    let (launcher, rank, size, local_size, job) = if let (Some(r), Some(s)) = (
        num(get, "OMPI_COMM_WORLD_RANK")?,
        num(get, "OMPI_COMM_WORLD_SIZE")?,
    ) {
        let job = get("OMPI_MCA_ess_base_jobid").or_else(|| get("PMIX_NAMESPACE"));
        (
            Launcher::OpenMpi,
            r,
            s,
            num(get, "OMPI_COMM_WORLD_LOCAL_SIZE")?,
            job,
        )
    } else if let (Some(r), Some(s)) = (num(get, "PMI_RANK")?, num(get, "PMI_SIZE")?) {
        let job = get("PMI_KVSNAME").or_else(|| get("PMI_KVS_NAME"));
        (Launcher::Mpich, r, s, num(get, "MPI_LOCALNRANKS")?, job)
    } else if let Some(job) = slurm_job.clone() {
        let (Some(r), Some(s)) = (num(get, "SLURM_PROCID")?, num(get, "SLURM_STEP_NUM_TASKS")?)
        else {
            return Err(Error::input(format!(
                "inside Slurm job {job} but not in an srun step: every process would think it is rank 0 of 1; start the fleet with `srun --ntasks-per-node=1 memsight run --fleet DIR`"
            )));
        };
        let step = get("SLURM_STEP_ID").unwrap_or_else(|| "0".into());
        (
            Launcher::Slurm,
            r,
            s,
            slurm_local(get),
            Some(format!("{job}.{step}")),
        )
    } else {
        return Ok(Place {
            launcher: Launcher::None,
            rank: 0,
            size: 1,
            local_size: None,
            job: None,
        });
    };
    if size == 0 || rank >= size {
        return Err(Error::input(format!(
            "the launcher says rank {rank} of {size}: not a valid place in the fleet"
        )));
    }
    if size == 1
        && launcher == Launcher::Slurm
        && let Some(nodes) = num(get, "SLURM_JOB_NUM_NODES")?.filter(|&n| n > 1)
    {
        return Err(Error::input(format!(
            "a fleet of 1 in a Slurm job of {nodes} nodes: the other nodes measure nothing; use `srun --ntasks-per-node=1 memsight run --fleet DIR`"
        )));
    }
    // srun with an MPI plugin sets both: they must describe the same world.
    if launcher != Launcher::Slurm
        && let (Some(_), Some(sr), Some(ss)) = (
            slurm_job.as_ref(),
            num(get, "SLURM_PROCID")?,
            num(get, "SLURM_STEP_NUM_TASKS")?,
        )
        && get("SLURM_STEP_ID").is_some()
        && ss > 1
        && (ss != size || sr != rank)
    {
        return Err(Error::input(format!(
            "srun says rank {sr} of {ss} but the MPI launcher says rank {rank} of {size}: ranks disagree (mpirun inside an srun step?); launch with one of them"
        )));
    }
    Ok(Place {
        launcher,
        rank,
        size,
        local_size,
        job,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn place(vars: &[(&str, &str)]) -> Result<Place, Error> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        detect(&|k| m.get(k).cloned())
    }

    #[test]
    fn srun_steps_give_rank_size_and_tasks_per_node() {
        // What `srun -n 3 --overcommit` set on this machine's one-node cluster.
        let p = place(&[
            ("SLURM_JOB_ID", "1"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "2"),
            ("SLURM_STEP_NUM_TASKS", "3"),
            ("SLURM_NTASKS", "3"),
            ("SLURM_TASKS_PER_NODE", "3"),
            ("SLURM_NODEID", "0"),
            ("SLURM_JOB_NUM_NODES", "1"),
        ])
        .unwrap();
        assert_eq!(
            (p.launcher, p.rank, p.size, p.local_size),
            (Launcher::Slurm, 2, 3, Some(3))
        );
        assert_eq!(p.job.as_deref(), Some("1.0"));
    }

    #[test]
    fn open_mpi_and_mpich_name_their_worlds() {
        // What `mpirun --oversubscribe -np 3` set here (Open MPI 4.1).
        let p = place(&[
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "3"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "3"),
            ("OMPI_MCA_ess_base_jobid", "956301313"),
        ])
        .unwrap();
        assert_eq!((p.launcher, p.rank, p.size), (Launcher::OpenMpi, 1, 3));
        assert_eq!(p.local_size, Some(3));
        let p = place(&[
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "4"),
            ("MPI_LOCALNRANKS", "1"),
        ])
        .unwrap();
        assert_eq!((p.launcher, p.rank, p.size), (Launcher::Mpich, 0, 4));
    }

    #[test]
    fn mpirun_inside_an_allocation_uses_its_own_world() {
        // sbatch -n 64 (batch step), then mpirun -ppn 1 over 4 nodes: Slurm's task count is the
        // allocation's, not the fleet's.
        let p = place(&[
            ("SLURM_JOB_ID", "77"),
            ("SLURM_NTASKS", "64"),
            ("SLURM_PROCID", "0"),
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ])
        .unwrap();
        assert_eq!((p.rank, p.size), (3, 4));
    }

    #[test]
    fn the_silent_failures_are_refused() {
        let batch = place(&[
            ("SLURM_JOB_ID", "7"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_PROCID", "0"),
        ]);
        assert!(
            batch
                .unwrap_err()
                .to_string()
                .contains("not in an srun step")
        );
        let alone = place(&[
            ("SLURM_JOB_ID", "7"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "0"),
            ("SLURM_STEP_NUM_TASKS", "1"),
            ("SLURM_JOB_NUM_NODES", "16"),
        ]);
        assert!(alone.unwrap_err().to_string().contains("fleet of 1"));
        let beyond = place(&[("PMI_RANK", "4"), ("PMI_SIZE", "4")]);
        assert!(beyond.unwrap_err().to_string().contains("rank 4 of 4"));
        let disagree = place(&[
            ("SLURM_JOB_ID", "7"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "1"),
            ("SLURM_STEP_NUM_TASKS", "4"),
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "1"),
        ]);
        assert!(disagree.unwrap_err().to_string().contains("disagree"));
        let garbage = place(&[("PMI_RANK", "x"), ("PMI_SIZE", "2")]);
        assert!(garbage.unwrap_err().to_string().contains("not a number"));
    }

    #[test]
    fn no_launcher_is_a_fleet_of_one() {
        let p = place(&[]).unwrap();
        assert_eq!((p.launcher, p.rank, p.size), (Launcher::None, 0, 1));
    }

    #[test]
    fn slurm_tasks_per_node_forms() {
        let get = |spec: &'static str, node: &'static str| {
            move |k: &str| match k {
                "SLURM_TASKS_PER_NODE" => Some(spec.to_string()),
                "SLURM_NODEID" => Some(node.to_string()),
                _ => None,
            }
        };
        assert_eq!(slurm_local(&get("2(x3),1", "1")), Some(2));
        assert_eq!(slurm_local(&get("2(x3),1", "3")), Some(1));
        assert_eq!(slurm_local(&get("4", "0")), Some(4));
    }
}
