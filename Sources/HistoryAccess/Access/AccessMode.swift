/// How requests are authenticated, chosen once at start.
///
/// - `open`: no key configured; every request acts as an administrator.
///   Safe only where nobody else can connect, so it needs a loopback bind
///   (or `--insecure-no-auth`, for a server behind something that
///   authenticates for it).
/// - `tokens`: every `/v1` request and `/metrics` need a bearer JWT.
public enum AccessMode: Sendable {
    case open
    case tokens(TokenVerifier)

    public var isOpen: Bool {
        if case .open = self { true } else { false }
    }

    /// 127.0.0.0/8, ::1 and `localhost`: addresses only this machine reaches.
    public static func isLoopback(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in
            !octet.isEmpty && octet.count <= 3 && octet.allSatisfy { $0.isASCII && $0.isNumber } && Int(octet)! <= 255
        }
    }
}
