import Foundation
import Glibc

/// A client that reads only when told to, and only so much: a bare loopback
/// socket, by default with a small receive buffer so what the server writes
/// waits in the server rather than here. `hasEnded` asks `poll`, which
/// reports a reset at once even while unread bytes are queued.
public final class TrickleClient {
    private let descriptor: Int32
    public private(set) var bytesRead = 0
    /// `POLLRDHUP`, which Glibc declares only under `_GNU_SOURCE`.
    private static let peerClosedOutput: Int16 = 0x2000

    /// `receiveBufferBytes`: `SO_RCVBUF`, or nil for the system's (growing) default.
    public init(port: Int, receiveBufferBytes: Int? = 16 * 1024) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        if let receiveBufferBytes {
            var size = Int32(receiveBufferBytes)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED)
        }
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
            guard sent > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            offset += sent
        }
    }

    /// Whether the server ended the connection (a reset, or its end of output).
    public func hasEnded() throws -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN) | Self.peerClosedOutput, revents: 0)
        guard poll(&entry, 1, 0) >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return entry.revents & (Int16(POLLHUP) | Int16(POLLERR) | Self.peerClosedOutput) != 0
    }

    /// Reads at most `count` bytes of what has arrived, without waiting.
    public func read(upTo count: Int) {
        var buffer = [UInt8](repeating: 0, count: min(count, 64 * 1024))
        var total = 0
        while total < count {
            let wanted = min(buffer.count, count - total)
            let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, wanted, Int32(MSG_DONTWAIT)) }
            guard received > 0 else { break }
            total += received
        }
        bytesRead += total
    }

    public func close() {
        Glibc.close(descriptor)
    }
}
