import CZlib
import Synchronization

/// The gzip content coding (RFC 9110 §8.4.1.3) over the system's zlib: a
/// deflate stream in the gzip wrapper (`windowBits` 31), whole bodies at once.
///
/// The server compresses answers of 1 KiB and more for clients that accept
/// it; `decompress` is for the clients of this package (the load tool's
/// checks, the tests), bounded so a hostile stream cannot fill the memory.
public enum Gzip {
    /// The level the server uses: on a page of 50 (13 KB of JSON), level 1
    /// sends 18.5% of the bytes for about 95 µs of CPU, level 4 17.7% for
    /// 128 µs, level 6 17.4% for 215 µs: the higher levels buy under one
    /// point of bytes with a third more CPU and up. docs/performance.md,
    /// "gzip level", has the command and the table.
    public static let serverLevel: Int32 = 1

    /// zlib's gzip wrapper: a 32 KiB window (15) plus 16.
    private static let gzipWindowBits: Int32 = 31

    /// The gzip member of `bytes`; nil only if zlib refuses (out of memory).
    ///
    /// At the server's level the stream comes from `idleStreams` and goes
    /// back there, reset: a fresh one costs zlib's 256 KiB of tables, whose
    /// allocation and first touch (page faults) cost more than deflating a
    /// page of 50 (measured: 367 against 131 µs of server CPU per page with
    /// a new stream per answer; docs/performance.md, "gzip level").
    public static func compress(_ bytes: [UInt8], level: Int32 = serverLevel) -> [UInt8]? {
        let pooled = level == serverLevel
        guard let stream = pooled ? takeStream() : newStream(level: level) else { return nil }
        let output = deflateWhole(bytes, with: stream)
        if pooled, deflateReset(stream) == Z_OK {
            putBack(stream)
        } else {
            deflateEnd(stream)
            stream.deallocate()
        }
        return output
    }

    /// Streams at `serverLevel`, reset, for the next answer: at most as many
    /// as answers were compressed at once (the read pool's threads), capped.
    private static let idleStreams = Mutex<[IdleStream]>([])
    private static let maximumIdleStreams = 64

    /// The use of `@unchecked Sendable` is safe because: an idle stream is
    /// only in `idleStreams`, and one taken out is used by the one thread
    /// that took it until it puts it back.
    private struct IdleStream: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<z_stream>
    }

    private static func takeStream() -> UnsafeMutablePointer<z_stream>? {
        idleStreams.withLock { $0.popLast()?.pointer } ?? newStream(level: serverLevel)
    }

    private static func putBack(_ stream: UnsafeMutablePointer<z_stream>) {
        let kept = idleStreams.withLock { idle in
            guard idle.count < maximumIdleStreams else { return false }
            idle.append(IdleStream(pointer: stream))
            return true
        }
        if !kept {
            deflateEnd(stream)
            stream.deallocate()
        }
    }

    /// A deflate stream in the gzip wrapper, at a fixed address (zlib's
    /// state points back to it).
    private static func newStream(level: Int32) -> UnsafeMutablePointer<z_stream>? {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_deflate_init(stream, level, gzipWindowBits) == Z_OK else {
            stream.deallocate()
            return nil
        }
        return stream
    }

    /// One Z_FINISH call into deflateBound's bytes, which always suffice.
    private static func deflateWhole(_ bytes: [UInt8], with stream: UnsafeMutablePointer<z_stream>) -> [UInt8]? {
        let capacity = Int(deflateBound(stream, uLong(bytes.count)))
        var finished = false
        // Uninitialized: zlib writes every byte that is kept.
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { out, initialized in
            bytes.withUnsafeBufferPointer { input in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = uInt(input.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                finished = deflate(stream, Z_FINISH) == Z_STREAM_END
                initialized = finished ? out.count - Int(stream.pointee.avail_out) : 0
            }
        }
        return finished ? output : nil
    }

    /// The bytes of a gzip body; nil when it is not one (or is cut short),
    /// or when it would inflate to more than `maximumBytes`.
    public static func decompress(_ bytes: [UInt8], maximumBytes: Int = 64 << 20) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_inflate_init(&stream, gzipWindowBits) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(4096, bytes.count * 4))
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                output.append(contentsOf: chunk[..<produced])
                guard output.count <= maximumBytes else { return nil }
                switch status {
                case Z_STREAM_END: return stream.avail_in == 0 ? output : nil
                case Z_OK: continue
                case Z_BUF_ERROR where produced > 0: continue
                default: return nil
                }
            }
        }
    }
}
