//! The platform table: memory channels and supported speeds per CPU family, each row with its
//! source. Sources marked "unverified" state general knowledge that no document retrieved for
//! this project confirmed; the figures are still the vendors' published ones as far as we know,
//! and the output says so wherever such a row is used.

/// Memory kinds a platform drives, for the speed rule that applies to an inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kinds {
    /// Registered/load-reduced server DIMMs.
    ServerDimm,
    /// Unbuffered DIMMs (desktops, workstations on client sockets).
    Udimm,
    /// SODIMM or soldered LPDDR (laptops): 128-bit bus either way.
    Mobile,
    /// LPDDR soldered on the package only (Lunar Lake, Grace, Strix Halo).
    PackageLpddr,
}

/// One row: a case-insensitive pattern over the normalised CPU name, and the memory system.
pub(crate) struct Row {
    pub pattern: &'static str,
    pub name: &'static str,
    /// Memory channels per socket in 64-bit equivalents (a DDR5 DIMM's two 32-bit
    /// sub-channels are one; four 16-bit LPDDR channels are one).
    pub channels: u32,
    /// Highest DIMM speed at one DIMM per channel, MT/s (DDR4 or DDR5 as the row says).
    pub mts: u32,
    /// At two DIMMs per channel, where the platform supports it and the speed is known.
    pub mts_2dpc: Option<u32>,
    /// LPDDR speed for parts that also take soldered LPDDR, MT/s.
    pub lpddr_mts: Option<u32>,
    pub memory: &'static str,
    pub kinds: Kinds,
    /// AMD chiplet parts: CCD→IOD bytes per fabric clock, read and write.
    pub fabric: bool,
    pub source: &'static str,
    pub verified: bool,
}

macro_rules! row {
    ($pat:expr, $name:expr, $ch:expr, $mts:expr, $two:expr, $lp:expr, $mem:expr, $kinds:ident, $fabric:expr, $src:expr, $ok:expr) => {
        Row {
            pattern: $pat,
            name: $name,
            channels: $ch,
            mts: $mts,
            mts_2dpc: $two,
            lpddr_mts: $lp,
            memory: $mem,
            kinds: Kinds::$kinds,
            fabric: $fabric,
            source: $src,
            verified: $ok,
        }
    };
}

/// Most specific rows first: the first match wins.
pub(crate) static ROWS: &[Row] = &[
    // ---- AMD EPYC ----
    row!(r"EPYC 7\d\d1", "AMD EPYC 7001 (Naples)", 8, 2666, None, None, "DDR4 RDIMM/LRDIMM", ServerDimm, false,
        "platform-limits.md §1.2 (tomshardware.fr EPYC table; AnandTech EPYC analysis)", true),
    row!(r"EPYC 7\d\d2", "AMD EPYC 7002 (Rome)", 8, 3200, Some(2933), None, "DDR4 RDIMM/LRDIMM", ServerDimm, true,
        "platform-limits.md §1.1–1.2 (Dell 'AMD Rome – is it for real?'; 2DPC 2933 by analogy with Milan, unverified)", true),
    row!(r"EPYC 7\d\d3", "AMD EPYC 7003 (Milan)", 8, 3200, Some(2933), None, "DDR4 RDIMM/LRDIMM/3DS", ServerDimm, true,
        "platform-limits.md §1.2 (Gigabyte EPYC 7003 memory population guide)", true),
    row!(r"EPYC 4\d\d4", "AMD EPYC 4004 (AM5)", 2, 5200, Some(3600), None, "DDR5 ECC UDIMM", Udimm, true,
        "unverified: same AM5 memory controller as Ryzen 7000 (TechSpot/AMD: 5200 at 1DPC, 3600 at 2DPC)", false),
    row!(r"EPYC 8\d\d4", "AMD EPYC 8004 (Siena)", 6, 4800, None, None, "DDR5 RDIMM", ServerDimm, true,
        "unverified: AMD EPYC 8004 product brief (6 × DDR5-4800)", false),
    row!(r"EPYC 9\d\d4", "AMD EPYC 9004 (Genoa/Bergamo)", 12, 4800, None, None, "DDR5 RDIMM", ServerDimm, true,
        "platform-limits.md §1.2 (Dell infohub DDR5 bandwidth 4th Gen EPYC; Tom's Hardware); 2DPC speed unverified", true),
    row!(r"EPYC 9\d\d5", "AMD EPYC 9005 (Turin)", 12, 6000, None, None, "DDR5 RDIMM", ServerDimm, true,
        "platform-limits.md §1.1–1.2 (AMD 5th-Gen EPYC architecture paper via vengineer)", true),
    // ---- AMD Threadripper ----
    row!(r"THREADRIPPER PRO [35]\d\d\dWX", "AMD Threadripper PRO 3000WX/5000WX (WRX80)", 8, 3200, None, None, "DDR4 RDIMM", ServerDimm, true,
        "platform-limits.md §1.2 (fixtures: 3995WX with 8 × 128 GB at 3200)", true),
    row!(r"THREADRIPPER PRO 79\d\dWX", "AMD Threadripper PRO 7000WX (WRX90)", 8, 5200, None, None, "DDR5 RDIMM", ServerDimm, true,
        "unverified: AMD Threadripper PRO 7000WX product pages (8 × DDR5-5200)", false),
    row!(r"THREADRIPPER PRO 99\d\dWX", "AMD Threadripper PRO 9000WX (WRX90)", 8, 6400, None, None, "DDR5 RDIMM", ServerDimm, true,
        "unverified: AMD Threadripper PRO 9000WX product pages (8 × DDR5-6400)", false),
    row!(r"THREADRIPPER 79\d\dX", "AMD Threadripper 7000 (TRX50)", 4, 5200, None, None, "DDR5 RDIMM", ServerDimm, true,
        "platform-limits.md §1.2 (fixture: 4 RDIMMs in 8 slots; channel count and speed unverified)", false),
    row!(r"THREADRIPPER 99\d\dX", "AMD Threadripper 9000 (TRX50)", 4, 6400, None, None, "DDR5 RDIMM", ServerDimm, true,
        "unverified: AMD Threadripper 9000 product pages (4 × DDR5-6400)", false),
    row!(r"THREADRIPPER 39\d\dX", "AMD Threadripper 3000 (TRX40)", 4, 3200, None, None, "DDR4 UDIMM", Udimm, true,
        "unverified: AMD Threadripper 3000 product pages (4 × DDR4-3200)", false),
    row!(r"THREADRIPPER [12]9\d\dW?X", "AMD Threadripper 1000/2000 (X399)", 4, 2933, None, None, "DDR4 UDIMM", Udimm, false,
        "unverified: AMD product pages (4 × DDR4-2666 for 1000, 2933 for 2000)", false),
    // ---- AMD Ryzen: laptops before desktops (their numbers overlap) ----
    row!(r"RYZEN AI MAX\+? (PRO )?3\d\d", "AMD Ryzen AI Max 300 (Strix Halo)", 4, 8000, None, Some(8000), "LPDDR5X-8000, 256-bit, soldered", PackageLpddr, false,
        "unverified: AMD Ryzen AI Max product pages (256-bit LPDDR5X-8000)", false),
    row!(r"RYZEN AI [579] (HX )?(PRO )?3\d\d", "AMD Ryzen AI 300 (Strix Point)", 2, 5600, None, Some(7500), "DDR5-5600 SODIMM or LPDDR5X-7500", Mobile, false,
        "unverified: AMD Ryzen AI 300 product pages (DDR5-5600, LPDDR5X-7500)", false),
    row!(r"RYZEN [3579] (PRO )?7\d45HX", "AMD Ryzen 7045HX (Dragon Range)", 2, 5200, None, None, "DDR5-5200 SODIMM", Mobile, false,
        "unverified: AMD Ryzen 7045HX product pages (DDR5-5200)", false),
    row!(r"RYZEN [3579] (PRO )?[78]\d4\d(U|H|HS)\b", "AMD Ryzen 7040/8040 mobile (Phoenix/Hawk Point)", 2, 5600, None, Some(7500), "DDR5-5600 SODIMM or LPDDR5X-7500", Mobile, false,
        "unverified: AMD Ryzen 7040/8040 product pages (DDR5-5600, LPDDR5X-7500)", false),
    row!(r"RYZEN [3579] (PRO )?6\d\d\d(U|H|HS|HX)\b", "AMD Ryzen 6000 mobile (Rembrandt)", 2, 4800, None, Some(6400), "DDR5-4800 SODIMM or LPDDR5-6400", Mobile, false,
        "Apacer slide as reported by latestnews.plus and pcmasters.de (Rembrandt: dual-channel DDR5-4800, LPDDR5-6400)", true),
    row!(r"RYZEN [3579] (PRO )?[45]\d\d\d(U|H|HS|HX)\b", "AMD Ryzen 4000/5000 mobile", 2, 3200, None, Some(4266), "DDR4-3200 SODIMM or LPDDR4X-4266", Mobile, false,
        "unverified: AMD Ryzen 4000/5000 mobile product pages", false),
    row!(r"RYZEN [3579] (PRO )?9\d\d\d(X3D|X|F)?( |$)", "AMD Ryzen 9000 (AM5)", 2, 5600, Some(3600), None, "DDR5 UDIMM", Udimm, true,
        "indiekings.com on Ryzen 9000 (DDR5-5600 default); 2DPC 3600 as on Ryzen 7000, unverified", false),
    row!(r"RYZEN [3579] (PRO )?8\d\d\dG", "AMD Ryzen 8000G (AM5)", 2, 5200, Some(3600), None, "DDR5 UDIMM", Udimm, false,
        "unverified: AMD Ryzen 8000G product pages (DDR5-5200)", false),
    row!(r"RYZEN [3579] (PRO )?7\d\d\d(X3D|X|F)?( |$)", "AMD Ryzen 7000 (AM5)", 2, 5200, Some(3600), None, "DDR5 UDIMM", Udimm, true,
        "TechSpot/AMD (via airlinkfreights.com): DDR5-5200 guaranteed at 1DPC, DDR5-3600 at 2DPC", true),
    row!(r"RYZEN [3579] (PRO )?[345]\d\d\d(XT|X3D|X|GE|G)?( |$)", "AMD Ryzen 3000/5000 (AM4)", 2, 3200, None, None, "DDR4 UDIMM", Udimm, true,
        "unverified: AMD Ryzen 3000/5000 product pages (DDR4-3200; fewer MT/s with 2 DIMMs per channel)", false),
    row!(r"RYZEN [357] (PRO )?[12]\d\d\d(X|AF|GE|G)?( |$)", "AMD Ryzen 1000/2000 (AM4)", 2, 2933, None, None, "DDR4 UDIMM", Udimm, false,
        "unverified: AMD product pages (DDR4-2666 for 1000, 2933 for 2000)", false),
    // ---- Intel laptops ----
    row!(r"CORE ULTRA [579] 2\d\dV\b", "Intel Core Ultra 200V (Lunar Lake)", 2, 8533, None, Some(8533), "LPDDR5X-8533 on package", PackageLpddr, false,
        "unverified: Intel Lunar Lake product pages (LPDDR5X-8533 memory on package)", false),
    row!(r"CORE ULTRA [3579] 2\d\d(H|HX|U)\b", "Intel Core Ultra 200H/HX/U (Arrow Lake mobile)", 2, 6400, None, Some(8400), "DDR5-6400 SODIMM or LPDDR5X-8400", Mobile, false,
        "unverified: Intel ark (Arrow Lake-H: DDR5-5600/6400, LPDDR5X-7467/8400)", false),
    row!(r"CORE ULTRA [3579] 1\d\d(H|U)\b", "Intel Core Ultra 100 (Meteor Lake)", 2, 5600, None, Some(7467), "DDR5-5600 SODIMM or LPDDR5X-7467", Mobile, false,
        "unverified: Intel ark Meteor Lake (DDR5-5600, LPDDR5/x-7467)", false),
    row!(r"I[3579]-1[34]\d\d\dHX\b", "Intel Core 13th/14th gen HX", 2, 5600, None, None, "DDR5-5600 SODIMM", Mobile, false,
        "unverified: Intel ark Raptor Lake-HX (DDR5-5600)", false),
    row!(r"I[3579]-13\d\d\d?(P|U|H)\b", "Intel Core 13th gen mobile (Raptor Lake-P/U/H)", 2, 5200, None, Some(6400), "DDR5-5200 SODIMM or LPDDR5-6400", Mobile, false,
        "fixture dell-xps-9320 (i7-1360P, LPDDR5 at 6400); DDR5-5200 from Intel ark, unverified", true),
    row!(r"I[3579]-12\d\d\d?(P|U|H|HX|HK)\b", "Intel Core 12th gen mobile (Alder Lake-P/U/H)", 2, 4800, None, Some(5200), "DDR5-4800 SODIMM, DDR4-3200 or LPDDR5-5200", Mobile, false,
        "fixture msi-stealth-gs66 (i9-12900H, DDR5 SODIMM at 4800); LPDDR5-5200 from Intel ark, unverified", true),
    row!(r"I[3579]-11\d\dG\d\b", "Intel Core 11th gen mobile (Tiger Lake-U)", 2, 3200, None, Some(4267), "DDR4-3200 SODIMM or LPDDR4X-4267", Mobile, false,
        "fixture acer-swift-sf314-59 (i5-1135G7, LPDDR4X at 4267)", true),
    // ---- Intel desktops ----
    row!(r"CORE ULTRA [3579] 2\d\d(K|KF|F|T)?( |$)", "Intel Core Ultra 200S (Arrow Lake, LGA1851)", 2, 6400, None, None, "DDR5 UDIMM/CUDIMM", Udimm, false,
        "computerbase.de (Arrow Lake-S DDR5 only, DDR5-6400 default); 2DPC derating not recorded", false),
    row!(r"I[3579]-1[34]\d\d\d(KS|KF|K|F|T)?( |$)", "Intel Core 13th/14th gen (Raptor Lake, LGA1700)", 2, 5600, Some(4400), None, "DDR5 UDIMM (or DDR4-3200 boards)", Udimm, false,
        "thefpsreview.com/Intel NAS workshop slide (DDR5-5600, DDR4-3200); 2DPC 4400 from Intel datasheet, unverified", true),
    row!(r"I[3579]-12\d\d\d(KS|KF|K|F|T)?( |$)", "Intel Core 12th gen (Alder Lake, LGA1700)", 2, 4800, Some(4000), None, "DDR5 UDIMM (or DDR4-3200 boards)", Udimm, false,
        "thefpsreview.com (Alder Lake: DDR5-4800 default, DDR4-3200); 2DPC 4000 from Intel datasheet, unverified", true),
    // ---- Intel Xeon ----
    row!(r"E5-\d{4}\w? V3", "Intel Xeon E5 v3 (Haswell-EP)", 4, 2133, Some(1866), None, "DDR4 RDIMM/LRDIMM", ServerDimm, false,
        "Dell DL4000/R730 owner's manuals (4 channels, 3 DIMMs per channel); fixtures run 2133 at 1DPC, 1866 at 3DPC", true),
    row!(r"E5-\d{4}\w? V4", "Intel Xeon E5 v4 (Broadwell-EP)", 4, 2400, None, None, "DDR4 RDIMM/LRDIMM", ServerDimm, false,
        "platform-limits.md §2 (AnandTech Skylake-vs-EPYC)", true),
    row!(r"(PLATINUM|GOLD|SILVER|BRONZE) \d1\d\d", "Intel Xeon SP 1st gen (Skylake-SP)", 6, 2666, Some(2666), None, "DDR4 RDIMM/LRDIMM", ServerDimm, false,
        "platform-limits.md §2 (AnandTech; frankdenneman.nl); Silver and Bronze run lower", true),
    row!(r"(PLATINUM|GOLD|SILVER|BRONZE) \d2\d\d", "Intel Xeon SP 2nd gen (Cascade Lake)", 6, 2933, Some(2933), None, "DDR4 RDIMM/LRDIMM, Optane PMem 100", ServerDimm, false,
        "platform-limits.md §2 (advancedhpc.com): 2933 Platinum/Gold 6xxx, 2666 Gold 5xxx, 2400 Silver", true),
    row!(r"(PLATINUM|GOLD) \d3\d\dH", "Intel Xeon SP 3rd gen (Cooper Lake)", 6, 3200, None, None, "DDR4 RDIMM/LRDIMM", ServerDimm, false,
        "unverified: Intel ark Cooper Lake (6 × DDR4-3200)", false),
    row!(r"(PLATINUM|GOLD|SILVER|BRONZE) \d3\d\d", "Intel Xeon SP 3rd gen (Ice Lake-SP)", 8, 3200, Some(3200), None, "DDR4 RDIMM/LRDIMM, Optane PMem 200", ServerDimm, false,
        "platform-limits.md §2; Dell XC750xa manual (3200 at 1 and 2 DIMMs per channel); Gold 53xx 2933, Silver 2666", true),
    row!(r"(PLATINUM|GOLD|SILVER|BRONZE) \d4\d\d", "Intel Xeon SP 4th gen (Sapphire Rapids)", 8, 4800, Some(4400), None, "DDR5 RDIMM", ServerDimm, false,
        "platform-limits.md §2 (Dell infohub SPR; ai-hpc.org: 4800 at 1DPC, 4400 at 2DPC)", true),
    row!(r"(PLATINUM|GOLD|SILVER|BRONZE) \d5\d\d", "Intel Xeon SP 5th gen (Emerald Rapids)", 8, 5600, Some(4400), None, "DDR5 RDIMM", ServerDimm, false,
        "platform-limits.md §2 (fixture HPE DL380 Gen11: Gold 6526Y runs 5600 DIMMs at 5200); 2DPC unverified", false),
    row!(r"XEON (CPU )?MAX 94\d\d", "Intel Xeon CPU Max (Sapphire Rapids HBM)", 8, 4800, Some(4400), None, "DDR5 RDIMM + 64 GB HBM2e", ServerDimm, false,
        "unverified: Intel ark Xeon Max (8 × DDR5-4800 plus on-package HBM2e)", false),
    row!(r"XEON W[3579]?-3[45]\d\d", "Intel Xeon W-3400/3500 (W790)", 8, 4800, Some(4400), None, "DDR5 RDIMM", ServerDimm, false,
        "unverified: Intel ark Xeon W-3400 (8 × DDR5-4800)", false),
    row!(r"XEON W[3579]?-2[45]\d\d", "Intel Xeon W-2400/2500 (W790)", 4, 4800, Some(4400), None, "DDR5 RDIMM", ServerDimm, false,
        "unverified: Intel ark Xeon W-2400 (4 × DDR5-4800)", false),
    row!(r"XEON 69\d\dP", "Intel Xeon 6900P (Granite Rapids-AP)", 12, 6400, None, None, "DDR5 RDIMM-6400, MRDIMM-8800", ServerDimm, false,
        "platform-limits.md §2 (ServeTheHome Xeon 6900P review; fixture BIRCHSTREAM with MRDIMM 8800)", true),
    row!(r"XEON 69\d\dE", "Intel Xeon 6900E (Sierra Forest-AP)", 12, 6400, None, None, "DDR5 RDIMM", ServerDimm, false,
        "unverified: Intel ark Xeon 6900E (12 × DDR5-6400)", false),
    row!(r"XEON 6[3-7]\d\d[PE]", "Intel Xeon 6300/6500/6700 P and E (Granite Rapids-SP, Sierra Forest)", 8, 6400, Some(5200), None, "DDR5 RDIMM (MRDIMM-8000 on 6700P)", ServerDimm, false,
        "platform-limits.md §2 (unverified; fixture AvenueCityM 6710E runs 4800 DIMMs at 4800)", false),
    // ---- Arm servers ----
    row!(r"AMPEREONE\s*M", "AmpereOne M", 12, 5600, None, None, "DDR5 RDIMM", ServerDimm, false,
        "unverified: Ampere AmpereOne M product brief (12 × DDR5-5600)", false),
    row!(r"AMPEREONE", "AmpereOne", 8, 5200, None, None, "DDR5 RDIMM", ServerDimm, false,
        "unverified: Ampere AmpereOne product brief (8 × DDR5-5200)", false),
    row!(r"ALTRA", "Ampere Altra / Altra Max", 8, 3200, None, None, "DDR4 RDIMM", ServerDimm, false,
        "unverified: Ampere Altra product brief (8 × DDR4-3200); fixture ADLINK board runs 3200", false),
    row!(r"\bGRACE\b", "NVIDIA Grace", 8, 8000, None, Some(8000), "LPDDR5X on package, 512-bit per CPU", PackageLpddr, false,
        "hardwaretimes.com on NVIDIA's Grace Superchip: 32 LPDDR5X channels, up to 1 TB/s per two CPUs (per-CPU data rate assumed 8000)", false),
];
