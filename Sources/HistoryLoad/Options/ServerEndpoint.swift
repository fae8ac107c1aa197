import ArgumentParser

/// `--url http://127.0.0.1:8080`: where the server under test listens.
///
/// Plain HTTP to a literal address or `localhost` only: the tool speaks our
/// own HTTP/1.1 client over sockets, without TLS or DNS.
struct ServerEndpoint: ExpressibleByArgument, Hashable, Sendable, CustomStringConvertible {
    var host: String
    var port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init?(argument: String) {
        var rest = Substring(argument)
        if rest.hasPrefix("http://") { rest = rest.dropFirst(7) }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/") else { return nil }
        let host: Substring
        let portText: Substring?
        if rest.hasPrefix("[") {
            // [::1]:8080
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            portText = after.hasPrefix(":") ? after.dropFirst() : (after.isEmpty ? nil : "x")
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
            portText = nil
        }
        guard !host.isEmpty else { return nil }
        let port = portText.map { Int($0) } ?? 80
        guard let port, (1...65535).contains(port) else { return nil }
        self.host = host == "localhost" ? "127.0.0.1" : String(host)
        self.port = port
    }

    /// The `Host` header value.
    var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    var description: String { "http://\(authority)" }
}
