import HTTPCore
import HistoryAccess

/// Who a request's client is, by address (docs/API.md, "Behind a proxy"):
/// the peer, or, from a `--trusted-proxy` peer, the last address in
/// `X-Forwarded-For` (else `Forwarded: for=`) that is not itself a trusted
/// proxy. Per-client limits, rate limits and the access log use it.
///
/// Only trusted peers are believed: anyone else could write any address in
/// those headers and so be a new client on every request. From an
/// untrusted peer the headers are ignored.
///
/// Also the open-mode guard: a proxy in front of an open-mode server would
/// make every client on its side an administrator, so unless the operator
/// said so (`--insecure-no-auth`), a request carrying proxy headers is
/// refused (403 `forbidden`).
public struct ClientAddressing: Sendable {
    public let trustedProxies: [IPNetwork]
    /// Open mode without `--insecure-no-auth`: proxy headers are refused.
    public let refusesForwardedRequests: Bool

    public init(trustedProxies: [IPNetwork] = [], refusesForwardedRequests: Bool = false) {
        self.trustedProxies = trustedProxies
        self.refusesForwardedRequests = refusesForwardedRequests
    }

    /// Every peer is its own client; proxy headers are ignored.
    public static let direct = ClientAddressing()

    static func isForwarded(_ request: HTTPRequest) -> Bool {
        request.headers["X-Forwarded-For"] != nil || request.headers["Forwarded"] != nil
    }

    /// The 403 of an open-mode server reached through a proxy.
    static let forwardedInOpenMode = APIError(
        .forbidden, "this server runs without tokens and answers no proxied request: "
            + "give it token keys (or start it with --insecure-no-auth)")

    /// The client's address when it is not the peer's (the request came
    /// through a trusted proxy and names one); nil otherwise.
    func forwardedClient(of request: HTTPRequest, remoteAddress: String) -> IPAddress? {
        guard !trustedProxies.isEmpty, let peer = IPAddress(ClientKey.host(ofRemoteAddress: remoteAddress)),
              trusts(peer) else { return nil }
        var hops = Self.hops(request.headers.values(of: "X-Forwarded-For"), forwarded: false)
        if hops.isEmpty { hops = Self.hops(request.headers.values(of: "Forwarded"), forwarded: true) }
        // From the nearest hop back: each trusted proxy vouches for the one
        // before it; the first untrusted one is the client. A hop that is
        // not an address ends the chain at the last trusted one.
        var client: IPAddress?
        for hop in hops.reversed() {
            guard let address = hop else { break }
            client = address
            if !trusts(address) { break }
        }
        return client == peer ? nil : client
    }

    private func trusts(_ address: IPAddress) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// The addresses of the header fields' list elements, left to right;
    /// nil for an element that names no address (`unknown`, an obfuscated
    /// `_hidden` of RFC 7239, garbage).
    static func hops(_ values: [String], forwarded: Bool) -> [IPAddress?] {
        var hops: [IPAddress?] = []
        for value in values {
            for element in value.split(separator: ",") {
                if forwarded {
                    let pair = element.split(separator: ";").first { pair in
                        pair.drop { $0 == " " || $0 == "\t" }.prefix(4).lowercased() == "for="
                    }
                    guard let pair else { continue }
                    let node = pair.drop { $0 == " " || $0 == "\t" }.dropFirst(4)
                    hops.append(address(ofNode: node))
                } else {
                    hops.append(address(ofNode: element))
                }
            }
        }
        return hops
    }

    /// `1.2.3.4`, `1.2.3.4:port`, `2001:db8::1`, `[2001:db8::1]:port`,
    /// quoted or not, spaces around.
    static func address(ofNode node: Substring) -> IPAddress? {
        var text = node.drop { $0 == " " || $0 == "\t" }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        if text.count >= 2, text.first == "\"", text.last == "\"" { text = text.dropFirst().dropLast() }
        if text.first == "[", let close = text.firstIndex(of: "]") {
            return IPAddress(text[text.index(after: text.startIndex)..<close])
        }
        if let address = IPAddress(text) { return address }
        // IPv4 with a port: exactly one colon.
        guard let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].allSatisfy(\.isNumber) else {
            return nil
        }
        return IPAddress(text[..<colon])
    }
}

/// A request's context once its client is known to be someone other than
/// the peer: what `ClientKey` keys on, and what the access log writes.
struct ForwardedContext: RequestContext {
    let connection: any RequestContext
    let client: IPAddress

    var remoteAddress: String { connection.remoteAddress }

    func onClose(_ handler: @escaping @Sendable () -> Void) {
        connection.onClose(handler)
    }
}
