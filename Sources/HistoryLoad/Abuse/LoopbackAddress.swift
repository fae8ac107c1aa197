/// `abuse` attacks only a server on this machine: its sockets by the
/// thousand would be an attack on anyone else's.
enum LoopbackAddress {
    /// 127.0.0.0/8 or ::1 (`localhost` is 127.0.0.1 already).
    static func isLoopback(_ host: String) -> Bool {
        if host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }

    /// The address attacking client `client` of `attack` connects from:
    /// 127.<attack>.<client / 250>.<client % 250 + 1>. All of 127/8 reaches
    /// the loopback interface on Linux, so a server that counts per peer
    /// address sees each attacking client apart from the normal users
    /// (127.0.0.1). Only for an IPv4 server; over ::1 everyone shares ::1.
    static func source(of attack: Attack, client: Int) -> String {
        "127.\(attack.sourceOctet).\(client / 250 % 256).\(client % 250 + 1)"
    }
}
