import HTTPCore
import HistoryAccess
import HistoryStore

/// A request's `ClientKey`: its caller's, or its client address's.
extension ClientKey {
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
}
