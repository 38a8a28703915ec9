//! Asking the allocator that serves `malloc` in this process who it is and what it holds, through
//! the C entry points each one exports (found with `dlsym`, so nothing links against them).

/// Looks a symbol up in the running process (the preloaded allocator or libc).
fn symbol(name: &std::ffi::CStr) -> *mut libc::c_void {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads the symbol tables.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// Which allocator serves `malloc` in this process, by the symbols only it exports.
pub fn allocator_name() -> &'static str {
    if !symbol(c"MallocExtension_GetNumericProperty").is_null() {
        "tcmalloc"
    } else if !symbol(c"mallctl").is_null() {
        "jemalloc"
    } else if !symbol(c"mi_process_info").is_null() {
        "mimalloc"
    } else if !symbol(c"mallinfo2").is_null() {
        "glibc"
    } else {
        "unknown"
    }
}

/// Whether a statistic of [`allocator_stats`] is a count (arenas, chunks) rather than bytes.
pub fn is_count(name: &str) -> bool {
    matches!(
        name,
        "arenas.narenas" | "ordblks (free chunks)" | "arenas (malloc_info)"
    )
}

/// The allocator's own statistics, by name, in bytes (or counts: [`is_count`]), where it offers
/// them.
pub fn allocator_stats() -> Vec<(String, f64)> {
    match allocator_name() {
        "tcmalloc" => tcmalloc_stats(),
        "jemalloc" => jemalloc_stats(),
        "mimalloc" => mimalloc_stats(),
        "glibc" => glibc_stats(),
        _ => Vec::new(),
    }
}

/// tcmalloc's own figures.
fn tcmalloc_stats() -> Vec<(String, f64)> {
    let mut out = Vec::new();
    type Get = unsafe extern "C" fn(*const libc::c_char, *mut libc::size_t) -> libc::c_int;
    let f = symbol(c"MallocExtension_GetNumericProperty");
    // SAFETY: gperftools exports this C function with exactly this signature.
    let get: Get = unsafe { std::mem::transmute::<*mut libc::c_void, Get>(f) };
    for name in [
        c"generic.current_allocated_bytes",
        c"generic.heap_size",
        c"tcmalloc.pageheap_free_bytes",
        c"tcmalloc.pageheap_unmapped_bytes",
    ] {
        let mut v: libc::size_t = 0;
        // SAFETY: a valid C string and a valid out pointer.
        if unsafe { get(name.as_ptr(), &mut v) } != 0 {
            out.push((name.to_string_lossy().into_owned(), v as f64));
        }
    }
    out
}

/// jemalloc's own figures.
fn jemalloc_stats() -> Vec<(String, f64)> {
    let mut out = Vec::new();
    type Ctl = unsafe extern "C" fn(
        *const libc::c_char,
        *mut libc::c_void,
        *mut libc::size_t,
        *mut libc::c_void,
        libc::size_t,
    ) -> libc::c_int;
    let f = symbol(c"mallctl");
    // SAFETY: jemalloc exports mallctl with exactly this signature.
    let ctl: Ctl = unsafe { std::mem::transmute::<*mut libc::c_void, Ctl>(f) };
    let mut epoch: u64 = 1;
    let mut len = std::mem::size_of::<u64>();
    // SAFETY: "epoch" takes and returns a u64; the pointers are valid for its size.
    unsafe {
        ctl(
            c"epoch".as_ptr(),
            (&mut epoch as *mut u64).cast(),
            &mut len,
            (&mut epoch as *mut u64).cast(),
            len,
        )
    };
    for name in [
        c"stats.allocated",
        c"stats.active",
        c"stats.resident",
        c"stats.mapped",
        c"stats.retained",
    ] {
        let mut v: libc::size_t = 0;
        let mut len = std::mem::size_of::<libc::size_t>();
        // SAFETY: these statistics are size_t values; the pointers are valid.
        if unsafe {
            ctl(
                name.as_ptr(),
                (&mut v as *mut libc::size_t).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        } == 0
        {
            out.push((name.to_string_lossy().into_owned(), v as f64));
        }
    }
    let mut n: libc::c_uint = 0;
    let mut len = std::mem::size_of::<libc::c_uint>();
    // SAFETY: "arenas.narenas" is an unsigned int.
    if unsafe {
        ctl(
            c"arenas.narenas".as_ptr(),
            (&mut n as *mut libc::c_uint).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    } == 0
    {
        out.push(("arenas.narenas".into(), n as f64));
    }
    out
}

/// mimalloc's own figures.
fn mimalloc_stats() -> Vec<(String, f64)> {
    let mut out = Vec::new();
    type Info = unsafe extern "C" fn(
        *mut libc::size_t,
        *mut libc::size_t,
        *mut libc::size_t,
        *mut libc::size_t,
        *mut libc::size_t,
        *mut libc::size_t,
        *mut libc::size_t,
        *mut libc::size_t,
    );
    let f = symbol(c"mi_process_info");
    // SAFETY: mimalloc exports mi_process_info with eight size_t out-parameters.
    let info: Info = unsafe { std::mem::transmute::<*mut libc::c_void, Info>(f) };
    let mut v = [0usize; 8];
    let p = v.as_mut_ptr();
    // SAFETY: eight valid, distinct out pointers into `v`.
    unsafe {
        info(
            p,
            p.add(1),
            p.add(2),
            p.add(3),
            p.add(4),
            p.add(5),
            p.add(6),
            p.add(7),
        )
    };
    // mimalloc's `current_rss` is its committed bytes on Linux (an estimate, equal to
    // current_commit), and `peak_rss` is getrusage's, which can be lower: only the figures it
    // measures are kept, named for what they are.
    let _ = v[3];
    out.push(("peak_rss (getrusage)".into(), v[4] as f64));
    out.push(("current_commit".into(), v[5] as f64));
    out.push(("peak_commit".into(), v[6] as f64));
    out
}

/// glibc's own figures.
fn glibc_stats() -> Vec<(String, f64)> {
    let mut out = Vec::new();
    #[repr(C)]
    #[derive(Default)]
    struct Mallinfo2 {
        arena: libc::size_t,
        ordblks: libc::size_t,
        smblks: libc::size_t,
        hblks: libc::size_t,
        hblkhd: libc::size_t,
        usmblks: libc::size_t,
        fsmblks: libc::size_t,
        uordblks: libc::size_t,
        fordblks: libc::size_t,
        keepcost: libc::size_t,
    }
    type Get = unsafe extern "C" fn() -> Mallinfo2;
    let f = symbol(c"mallinfo2");
    // SAFETY: glibc ≥ 2.33 exports mallinfo2() returning this struct by value.
    let get: Get = unsafe { std::mem::transmute::<*mut libc::c_void, Get>(f) };
    // SAFETY: no arguments; glibc walks its arenas under their locks.
    let m = unsafe { get() };
    out.push(("arena (non-mmapped bytes obtained)".into(), m.arena as f64));
    out.push(("hblkhd (mmapped bytes)".into(), m.hblkhd as f64));
    out.push(("uordblks (bytes in use)".into(), m.uordblks as f64));
    out.push(("fordblks (free bytes held)".into(), m.fordblks as f64));
    out.push(("ordblks (free chunks)".into(), m.ordblks as f64));
    if let Some(n) = glibc_arenas() {
        out.push(("arenas (malloc_info)".into(), n as f64));
    }
    out
}

/// glibc's arenas, the main one included: the `<heap nr=…>` entries of `malloc_info`.
pub fn glibc_arenas() -> Option<usize> {
    let mut buf: *mut libc::c_char = std::ptr::null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: open_memstream stores a malloc'd buffer and its length in the two out pointers
    // when the stream is closed.
    let stream = unsafe { libc::open_memstream(&mut buf, &mut len) };
    if stream.is_null() {
        return None;
    }
    // Looked up, not linked: a static musl build has no malloc_info (nor glibc's arenas).
    let f = symbol(c"malloc_info");
    if f.is_null() {
        // SAFETY: the stream was opened above and is closed once.
        unsafe { libc::fclose(stream) };
        // SAFETY: whatever the stream allocated was allocated with malloc.
        unsafe { libc::free(buf.cast()) };
        return None;
    }
    type Info = unsafe extern "C" fn(libc::c_int, *mut libc::FILE) -> libc::c_int;
    // SAFETY: glibc exports malloc_info(int options, FILE *stream) -> int.
    let info: Info = unsafe { std::mem::transmute::<*mut libc::c_void, Info>(f) };
    // SAFETY: a valid stream; glibc writes its XML report into it under the arena locks.
    let rc = unsafe { info(0, stream) };
    // SAFETY: the stream was opened above and is closed once; closing sets `buf` and `len`.
    unsafe { libc::fclose(stream) };
    if buf.is_null() {
        return None;
    }
    // SAFETY: after fclose `buf` holds `len` bytes written by malloc_info.
    let text = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
    let n = String::from_utf8_lossy(text).matches("<heap nr=").count();
    // SAFETY: the buffer was allocated by open_memstream with malloc.
    unsafe { libc::free(buf.cast()) };
    (rc == 0).then_some(n)
}

/// Calls glibc's `malloc_trim(0)` when glibc is the allocator; false otherwise.
pub fn trim() -> bool {
    if allocator_name() != "glibc" {
        return false;
    }
    let f = symbol(c"malloc_trim");
    if f.is_null() {
        return false;
    }
    type Trim = unsafe extern "C" fn(libc::size_t) -> libc::c_int;
    // SAFETY: glibc exports malloc_trim(size_t) -> int.
    let trim: Trim = unsafe { std::mem::transmute::<*mut libc::c_void, Trim>(f) };
    // SAFETY: malloc_trim takes the arena locks itself.
    unsafe { trim(0) };
    true
}
