import Glibc

/// Writes every byte of `bytes` to a blocking `fileDescriptor` (stdout, a
/// log file): a short write goes on from where it stopped and `EINTR` is
/// retried, so a signal or a full pipe never loses part of a line. Throws
/// the first other failure (`EPIPE`, `ENOSPC`, ...), with what was written
/// before it left written.
///
/// Public because the server's ready line and the access log write lines
/// the same way; this is the one copy of the loop.
public func writeAll(_ bytes: UnsafeRawBufferPointer, to fileDescriptor: Int32) throws(SocketError) {
    guard let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
        let written = try systemCall("write") { Glibc.write(fileDescriptor, base + offset, bytes.count - offset) }
        // Zero for a non-empty write means no progress is possible: stop rather than spin.
        if written == 0 { throw SocketError(errno: EIO, function: "write") }
        offset += written
    }
}
