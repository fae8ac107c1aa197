/// Whom a per-client limit counts: the token's `sub` in tokens mode, the
/// peer's address otherwise (open mode, where every caller is the trusted
/// administrator and the address is all there is to tell clients apart;
/// and a request whose authentication failed, which has no subject).
public enum ClientKey: Hashable, Sendable {
    case subject(String)
    case peer(String)

    /// The host of `host:port` or `[v6]:port`: every connection from one
    /// machine counts as the same client, whatever its source port.
    public static func host(ofRemoteAddress address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        guard let colon = address.lastIndex(of: ":") else { return address }
        return String(address[..<colon])
    }
}
