import HTTPCore
import HistoryStore

/// Whom a per-client limit counts: the token's `sub` in tokens mode, the
/// peer's address otherwise (open mode, where every caller is the trusted
/// administrator and the address is all there is to tell clients apart;
/// and a request whose authentication failed, which has no subject).
enum ClientKey: Hashable, Sendable {
    case subject(String)
    case peer(String)

    /// The key of a request's caller, or nil when the caller is exempt (an
    /// admin token: services that must not be throttled by user limits).
    init?(caller: Caller?, context: any RequestContext) {
        switch caller {
        case .user(let user): self = .subject(user.rawValue)
        case .admin(let subject?) where !subject.isEmpty: return nil
        default: self = .peer(context: context)
        }
    }

    /// The client's address as a limit counts it: behind a trusted proxy
    /// the forwarded one (`ClientAddressing`), else the peer's; IPv6 by its
    /// /64 (`IPAddress.limitKey`).
    static func peer(context: any RequestContext) -> ClientKey {
        if let forwarded = context as? ForwardedContext { return .peer(forwarded.client.limitKey) }
        let host = host(ofRemoteAddress: context.remoteAddress)
        return .peer(IPAddress(host)?.limitKey ?? host)
    }

    /// The host of `host:port` or `[v6]:port`: every connection from one
    /// machine counts as the same client, whatever its source port.
    static func host(ofRemoteAddress address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        guard let colon = address.lastIndex(of: ":") else { return address }
        return String(address[..<colon])
    }
}
