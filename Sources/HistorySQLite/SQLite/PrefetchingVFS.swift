import HistoryStore
import CSQLite
import Foundation
import Synchronization

/// The readers' VFS: the system's default one, except that every database
/// page SQLite takes from the memory map is prefetched into the CPU caches
/// whole, the moment SQLite takes it.
///
/// Why: a page of a conversation nobody read a moment ago is in memory (the
/// OS cache, mapped) but not in the CPU caches. SQLite then reads it one
/// cache line at a time as it goes: a binary search over the cells, each
/// probe a miss that waits for the one before, then the rows. Asking for
/// all 128 lines of an 8 KiB page at once lets the memory serve them in
/// parallel while SQLite starts its search. Cold pages get cheaper and the
/// hot page does not get dearer (prefetching lines already cached costs next
/// to nothing); prefetching only leaf pages gains less, since a cold
/// interior page is a binary search too. The figures, and how they were
/// measured: docs/performance.md, "The store alone" and "Reading cold pages".
///
/// How: `xOpen` opens the file with the default VFS, so the file object is
/// the default VFS's own and all its methods run unchanged on it; a main
/// database file then gets a copy of its I/O methods whose `xFetch` calls
/// the original and prefetches what it returned. The original table is
/// kept in bytes after the default VFS's file object (this VFS asks for a
/// slightly larger one), so the wrapper always calls the right `xFetch`.
/// Pages read from the WAL or without the map go through `xRead` and are
/// not touched. Writers keep the default VFS: they do not use the map.
///
/// Related SQLite documentation: <https://www.sqlite.org/vfs.html>,
/// <https://www.sqlite.org/c3ref/io_methods.html> (xFetch).
enum PrefetchingVFS {
    /// The name to open readers with, or nil when SQLite has no default
    /// VFS to wrap or refused the registration (readers then open with the
    /// default). Registered on first use, once per process.
    static let name: String? = register()

    private static let vfsName = "history-prefetch"

    /// The default VFS, immutable once registration has run.
    private nonisolated(unsafe) static var base: UnsafeMutablePointer<sqlite3_vfs>?

    /// Where, in our file object, the original I/O methods are kept: after
    /// the default VFS's file object, rounded up to pointer alignment.
    private nonisolated(unsafe) static var originalOffset = 0

    /// One wrapped copy per original I/O methods table (the default VFS
    /// picks among a few by file system), as addresses: they live for the
    /// process, as registered VFSes must.
    private static let wrappedTables = Mutex<[UInt: UInt]>([:])

    private static func register() -> String? {
        SQLiteLibrary.prepare()
        guard let found = sqlite3_vfs_find(nil) else { return nil }
        base = found
        originalOffset = (Int(found.pointee.szOsFile) + 7) & ~7
        var vfs = found.pointee
        vfs.pNext = nil
        vfs.zName = UnsafePointer(strdup(vfsName))
        vfs.szOsFile = Int32(originalOffset + MemoryLayout<UnsafeRawPointer>.size)
        vfs.xOpen = open
        let registered = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        registered.initialize(to: vfs)
        guard sqlite3_vfs_register(registered, 0) == SQLITE_OK else { return nil }
        return vfsName
    }

    /// Whether `file` was opened by this VFS with its `xFetch` wrapped.
    static func prefetches(_ file: UnsafeMutablePointer<sqlite3_file>) -> Bool {
        guard let methods = file.pointee.pMethods else { return false }
        let address = UInt(bitPattern: methods)
        return wrappedTables.withLock { $0.values.contains(address) }
    }

    private static func originalSlot(_ file: UnsafeMutablePointer<sqlite3_file>)
        -> UnsafeMutablePointer<UnsafePointer<sqlite3_io_methods>?> {
        (UnsafeMutableRawPointer(file) + originalOffset)
            .assumingMemoryBound(to: UnsafePointer<sqlite3_io_methods>?.self)
    }

    private static let open: @convention(c) (
        UnsafeMutablePointer<sqlite3_vfs>?, UnsafePointer<CChar>?, UnsafeMutablePointer<sqlite3_file>?,
        Int32, UnsafeMutablePointer<Int32>?
    ) -> Int32 = { _, path, file, flags, outFlags in
        guard let base = PrefetchingVFS.base, let file else { return SQLITE_MISUSE }
        PrefetchingVFS.originalSlot(file).pointee = nil
        let code = base.pointee.xOpen(base, path, file, flags, outFlags)
        guard code == SQLITE_OK, flags & SQLITE_OPEN_MAIN_DB != 0,
              let original = file.pointee.pMethods, original.pointee.iVersion >= 3,
              original.pointee.xFetch != nil else { return code }
        PrefetchingVFS.originalSlot(file).pointee = original
        file.pointee.pMethods = PrefetchingVFS.wrapped(original)
        return code
    }

    /// The copy of `original` whose `xFetch` prefetches.
    private static func wrapped(_ original: UnsafePointer<sqlite3_io_methods>) -> UnsafePointer<sqlite3_io_methods> {
        let address = wrappedTables.withLock { tables in
            let key = UInt(bitPattern: original)
            if let known = tables[key] { return known }
            var methods = original.pointee
            methods.xFetch = fetch
            let copy = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
            copy.initialize(to: methods)
            tables[key] = UInt(bitPattern: copy)
            return UInt(bitPattern: copy)
        }
        return UnsafePointer(bitPattern: address)!
    }

    private static let fetch: @convention(c) (
        UnsafeMutablePointer<sqlite3_file>?, sqlite3_int64, Int32, UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> Int32 = { file, offset, amount, page in
        guard let file, let original = PrefetchingVFS.originalSlot(file).pointee else { return SQLITE_MISUSE }
        let code = original.pointee.xFetch(file, offset, amount, page)
        if code == SQLITE_OK, let bytes = page?.pointee {
            csqlite_prefetch(bytes, amount)
        }
        return code
    }
}
