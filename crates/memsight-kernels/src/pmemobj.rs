//! libpmemobj (PMDK), loaded at run time with `dlopen`, so memsight builds and runs where PMDK
//! is absent and says so. Only what the pool study needs: create/close a pool, allocate
//! (optionally through an allocation class or arena), free, usable size, and the CTL namespace
//! (`heap.alloc_class.*`, `heap.arena.*`, `heap.thread.arena_id`).
//!
//! The declarations follow PMDK 1.12's `libpmemobj/{pool_base,base,atomic_base,ctl}.h`.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::Path;

/// A PMDK call that failed, in words (the pool study turns it into its own error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmdkError(pub String);

impl std::fmt::Display for PmdkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PmdkError {}

type Result<T> = std::result::Result<T, PmdkError>;

fn fail(msg: impl Into<String>) -> PmdkError {
    PmdkError(msg.into())
}

/// `PMEMoid`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Oid {
    pub pool_uuid_lo: u64,
    pub off: u64,
}

/// `enum pobj_header_type`.
pub const HEADER_LEGACY: u32 = 0;
pub const HEADER_COMPACT: u32 = 1;
pub const HEADER_NONE: u32 = 2;
/// `POBJ_XALLOC_ZERO`: PMDK zeroes (and persists) the object before handing it out.
pub const XALLOC_ZERO: u64 = 1;

/// Bytes of an allocation header of each type.
pub fn header_bytes(header_type: u32) -> u64 {
    match header_type {
        HEADER_LEGACY => 64,
        HEADER_COMPACT => 16,
        _ => 0,
    }
}

/// Name of a header type.
pub fn header_name(header_type: u32) -> &'static str {
    match header_type {
        HEADER_LEGACY => "legacy",
        HEADER_COMPACT => "compact",
        HEADER_NONE => "none",
        _ => "unknown",
    }
}

/// `struct pobj_alloc_class_desc`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClassDesc {
    pub unit_size: usize,
    pub alignment: usize,
    pub units_per_block: u32,
    pub header_type: u32,
    pub class_id: u32,
}

/// `POBJ_CLASS_ID(id)`.
pub fn class_flag(id: u32) -> u64 {
    u64::from(id) << 48
}

/// `PMEMOBJ_MIN_POOL`.
pub const MIN_POOL: u64 = 8 << 20;

type Create = unsafe extern "C" fn(*const c_char, *const c_char, usize, u32) -> *mut c_void;
type Close = unsafe extern "C" fn(*mut c_void);
type Xalloc = unsafe extern "C" fn(
    *mut c_void,
    *mut Oid,
    usize,
    u64,
    u64,
    *const c_void,
    *mut c_void,
) -> c_int;
type Free = unsafe extern "C" fn(*mut Oid);
type Usable = unsafe extern "C" fn(Oid) -> usize;
type Ctl = unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_void) -> c_int;
type ErrMsg = unsafe extern "C" fn() -> *const c_char;
/// `pmemobj_tx_begin(pop, env, ...)`: parameters end with `TX_PARAM_NONE` (0).
type TxBegin = unsafe extern "C" fn(*mut c_void, *mut c_void, ...) -> c_int;
type TxFree = unsafe extern "C" fn(Oid) -> c_int;
type TxVoid = unsafe extern "C" fn();
type TxInt = unsafe extern "C" fn() -> c_int;

/// `TX_STAGE_WORK` of `enum pobj_tx_stage`.
const TX_STAGE_WORK: c_int = 1;

/// The library's entry points.
pub struct Lib {
    create: Create,
    close: Close,
    xalloc: Xalloc,
    free: Free,
    usable: Usable,
    ctl_get: Ctl,
    ctl_set: Ctl,
    ctl_exec: Ctl,
    errormsg: ErrMsg,
    tx_begin: TxBegin,
    tx_free: TxFree,
    tx_commit: TxVoid,
    tx_end: TxInt,
    tx_stage: TxInt,
}

fn sym(handle: *mut c_void, name: &CStr) -> Result<*mut c_void> {
    // SAFETY: a live dlopen handle and a NUL-terminated name.
    let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
    if p.is_null() {
        Err(fail(format!(
            "libpmemobj lacks {}: PMDK too old",
            name.to_string_lossy()
        )))
    } else {
        Ok(p)
    }
}

impl Lib {
    /// Loads `libpmemobj.so.1` (or the library `$MEMSIGHT_PMEMOBJ_LIB` names), or says how to
    /// install it.
    pub fn load() -> Result<Lib> {
        let name =
            std::env::var("MEMSIGHT_PMEMOBJ_LIB").unwrap_or_else(|_| "libpmemobj.so.1".into());
        let cname = CString::new(name.clone())
            .map_err(|_| fail("MEMSIGHT_PMEMOBJ_LIB contains a NUL byte"))?;
        // SAFETY: dlopen with a NUL-terminated name; the handle is never closed (the library
        // stays loaded for the life of the process, as PMDK expects).
        let handle = unsafe { libc::dlopen(cname.as_ptr(), libc::RTLD_NOW) };
        if handle.is_null() {
            return Err(fail(format!(
                "libpmemobj (PMDK) is not available ({name} cannot be loaded): apt install libpmemobj1 (or libpmemobj-dev), then run again"
            )));
        }
        // SAFETY (all transmutes below): each symbol is the PMDK 1.12 function of that name,
        // whose C signature the type alias reproduces.
        unsafe {
            Ok(Lib {
                create: std::mem::transmute::<*mut c_void, Create>(sym(handle, c"pmemobj_create")?),
                close: std::mem::transmute::<*mut c_void, Close>(sym(handle, c"pmemobj_close")?),
                xalloc: std::mem::transmute::<*mut c_void, Xalloc>(sym(handle, c"pmemobj_xalloc")?),
                free: std::mem::transmute::<*mut c_void, Free>(sym(handle, c"pmemobj_free")?),
                usable: std::mem::transmute::<*mut c_void, Usable>(sym(
                    handle,
                    c"pmemobj_alloc_usable_size",
                )?),
                ctl_get: std::mem::transmute::<*mut c_void, Ctl>(sym(handle, c"pmemobj_ctl_get")?),
                ctl_set: std::mem::transmute::<*mut c_void, Ctl>(sym(handle, c"pmemobj_ctl_set")?),
                ctl_exec: std::mem::transmute::<*mut c_void, Ctl>(sym(
                    handle,
                    c"pmemobj_ctl_exec",
                )?),
                errormsg: std::mem::transmute::<*mut c_void, ErrMsg>(sym(
                    handle,
                    c"pmemobj_errormsg",
                )?),
                tx_begin: std::mem::transmute::<*mut c_void, TxBegin>(sym(
                    handle,
                    c"pmemobj_tx_begin",
                )?),
                tx_free: std::mem::transmute::<*mut c_void, TxFree>(sym(
                    handle,
                    c"pmemobj_tx_free",
                )?),
                tx_commit: std::mem::transmute::<*mut c_void, TxVoid>(sym(
                    handle,
                    c"pmemobj_tx_commit",
                )?),
                tx_end: std::mem::transmute::<*mut c_void, TxInt>(sym(handle, c"pmemobj_tx_end")?),
                tx_stage: std::mem::transmute::<*mut c_void, TxInt>(sym(
                    handle,
                    c"pmemobj_tx_stage",
                )?),
            })
        }
    }

    fn last_error(&self) -> String {
        // SAFETY: pmemobj_errormsg returns a thread-local NUL-terminated string (or NULL).
        let p = unsafe { (self.errormsg)() };
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: non-null, NUL-terminated, valid until the next PMDK call on this thread.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }
}

/// An open pool; closed on drop (the file is the caller's to remove).
pub struct Pool<'a> {
    lib: &'a Lib,
    pop: *mut c_void,
}

// SAFETY: libpmemobj pools are thread-safe for allocation, free and CTL calls.
unsafe impl Send for Pool<'_> {}
// SAFETY: as above.
unsafe impl Sync for Pool<'_> {}

fn cstring(s: &str) -> CString {
    CString::new(s).expect("no NUL in CTL names")
}

impl<'a> Pool<'a> {
    /// Creates a pool file of `size` bytes at `path` (which must not exist).
    pub fn create(lib: &'a Lib, path: &Path, size: u64) -> Result<Pool<'a>> {
        let p = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| fail("pool path contains a NUL byte"))?;
        // SAFETY: valid C strings; PMDK creates the file itself.
        let pop = unsafe { (lib.create)(p.as_ptr(), c"memsight".as_ptr(), size as usize, 0o600) };
        if pop.is_null() {
            return Err(fail(format!(
                "pmemobj_create({}, {} B) failed: {}",
                path.display(),
                size,
                lib.last_error()
            )));
        }
        Ok(Pool { lib, pop })
    }

    /// Allocates `size` bytes with `flags` (class or arena); `None` when PMDK refuses.
    pub fn xalloc(&self, size: usize, flags: u64) -> Option<Oid> {
        let mut oid = Oid::default();
        // SAFETY: a live pool, a valid out pointer, no constructor.
        let rc = unsafe {
            (self.lib.xalloc)(
                self.pop,
                &mut oid,
                size,
                1,
                flags,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        };
        (rc == 0).then_some(oid)
    }

    /// Frees an object from this pool.
    pub fn free(&self, mut oid: Oid) {
        // SAFETY: oid came from xalloc on this live pool and is freed once.
        unsafe { (self.lib.free)(&mut oid) };
    }

    /// Frees `oids` in one transaction, as an application that frees a batch atomically does
    /// (`TX_BEGIN { pmemobj_tx_free(…) … } TX_END`). The transaction logs every free, and the
    /// log itself is allocated from the pool: when the pool is exhausted the free can fail. On
    /// failure the transaction is aborted, nothing is freed, and PMDK's errno and message come
    /// back.
    pub fn tx_free_all(&self, oids: &[Oid]) -> Result<()> {
        // SAFETY: a live pool; no jmp_buf (NULL), so failures return instead of jumping; the
        // parameter list ends with TX_PARAM_NONE.
        let begun = unsafe { (self.lib.tx_begin)(self.pop, std::ptr::null_mut(), 0 as c_int) };
        if begun == 0 {
            for &oid in oids {
                // SAFETY: inside the transaction; each oid came from this pool and is freed once.
                if unsafe { (self.lib.tx_free)(oid) } != 0 {
                    break;
                }
            }
            // SAFETY: a transaction of this thread is open; commit only while it is working
            // (a failed free has aborted it).
            unsafe {
                if (self.lib.tx_stage)() == TX_STAGE_WORK {
                    (self.lib.tx_commit)();
                }
            }
        }
        // SAFETY: every pmemobj_tx_begin, successful or not, is paired with pmemobj_tx_end.
        let rc = unsafe { (self.lib.tx_end)() };
        if begun == 0 && rc == 0 {
            Ok(())
        } else {
            Err(fail(format!(
                "transactional free of {} object(s) failed (errno {}): {}",
                oids.len(),
                if rc != 0 { rc } else { begun },
                self.lib.last_error()
            )))
        }
    }

    /// Usable size of an object.
    pub fn usable_size(&self, oid: Oid) -> usize {
        // SAFETY: oid belongs to this live pool.
        unsafe { (self.lib.usable)(oid) }
    }

    /// The description of allocation class `id`, if it exists.
    pub fn class(&self, id: u32) -> Option<ClassDesc> {
        let name = cstring(&format!("heap.alloc_class.{id}.desc"));
        let mut d = ClassDesc::default();
        // SAFETY: a live pool, a C string, and an out struct of the type the entry returns.
        let rc = unsafe {
            (self.lib.ctl_get)(self.pop, name.as_ptr(), (&mut d as *mut ClassDesc).cast())
        };
        (rc == 0 && d.unit_size > 0).then_some(d)
    }

    /// Registers a new allocation class (`heap.alloc_class.new.desc`); returns it with its id.
    pub fn new_class(&self, mut d: ClassDesc) -> Result<ClassDesc> {
        let asked = d.units_per_block;
        let name = cstring("heap.alloc_class.new.desc");
        // SAFETY: as in `class`; PMDK writes the assigned class_id back.
        let rc = unsafe {
            (self.lib.ctl_set)(self.pop, name.as_ptr(), (&mut d as *mut ClassDesc).cast())
        };
        if rc != 0 {
            return Err(fail(format!(
                "PMDK rejected the allocation class (unit {} B, {} units per block, header {}): {}",
                d.unit_size,
                d.units_per_block,
                header_name(d.header_type),
                self.lib.last_error()
            )));
        }
        // PMDK registers a class whose run, once its header and alignment are taken, holds no
        // unit, and then refuses every allocation from it; it reads such a class back with
        // zero units per run, so check rather than fill a pool in vain.
        match self.class(d.class_id) {
            Some(back) if back.units_per_block == 0 => Err(fail(format!(
                "PMDK accepted the allocation class (unit {} B, {} units per run asked, alignment {} B) but a run of it holds no unit once the run's header and alignment are taken: ask for more units per run",
                d.unit_size, asked, d.alignment
            ))),
            Some(back) => Ok(ClassDesc {
                units_per_block: back.units_per_block,
                ..d
            }),
            None => Ok(d),
        }
    }

    /// Creates an arena (`heap.arena.create`); returns its id.
    pub fn create_arena(&self) -> Result<u32> {
        let name = cstring("heap.arena.create");
        let mut id: u32 = 0;
        // SAFETY: the entry writes an unsigned arena id.
        let rc =
            unsafe { (self.lib.ctl_exec)(self.pop, name.as_ptr(), (&mut id as *mut u32).cast()) };
        if rc != 0 {
            return Err(fail(format!(
                "heap.arena.create failed: {}",
                self.lib.last_error()
            )));
        }
        Ok(id)
    }

    /// Total arenas (`heap.narenas.total`).
    pub fn arenas(&self) -> Option<u32> {
        let name = cstring("heap.narenas.total");
        let mut n: u32 = 0;
        // SAFETY: the entry writes an unsigned count.
        let rc =
            unsafe { (self.lib.ctl_get)(self.pop, name.as_ptr(), (&mut n as *mut u32).cast()) };
        (rc == 0).then_some(n)
    }

    /// Binds the calling thread to arena `id` (`heap.thread.arena_id`).
    pub fn set_thread_arena(&self, id: u32) -> bool {
        let name = cstring("heap.thread.arena_id");
        let mut v = id;
        // SAFETY: the entry reads an unsigned arena id.
        unsafe { (self.lib.ctl_set)(self.pop, name.as_ptr(), (&mut v as *mut u32).cast()) == 0 }
    }

    /// The calling thread's arena.
    pub fn thread_arena(&self) -> Option<u32> {
        let name = cstring("heap.thread.arena_id");
        let mut v: u32 = 0;
        // SAFETY: the entry writes an unsigned arena id.
        let rc =
            unsafe { (self.lib.ctl_get)(self.pop, name.as_ptr(), (&mut v as *mut u32).cast()) };
        (rc == 0).then_some(v)
    }
}

impl Drop for Pool<'_> {
    fn drop(&mut self) {
        // SAFETY: the pool is open and closed exactly once.
        unsafe { (self.lib.close)(self.pop) };
    }
}

/// Bytes available to an unprivileged user on the file system holding `dir`.
pub fn free_space(dir: &Path) -> Option<u64> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs is a plain C struct of integers, valid when zeroed.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C path and a valid out struct.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut s) };
    (rc == 0).then(|| s.f_bavail as u64 * s.f_frsize as u64)
}
