import HTTPCore

/// Two clients that hold a server up as badly as they can: one sends half a
/// head and stops, one asks for `unreadTarget` (a large answer) and never
/// reads it. A server that serves one connection at a time, or blocks on a
/// write, stops answering everyone else behind them.
public func stalledClients(host: String = "127.0.0.1", port: Int, unreadTarget: String) throws -> [HTTPClientConnection] {
    let halfHead = try HTTPClientConnection(host: host, port: port)
    try halfHead.sendRaw("GET /stalled HTTP/1.1\r\nHost: half-a-hea")
    let neverReads = try HTTPClientConnection(host: host, port: port)
    try neverReads.sendRaw("GET \(unreadTarget) HTTP/1.1\r\nHost: h\r\n\r\n")
    return [halfHead, neverReads]
}
