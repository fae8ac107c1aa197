import ArgumentParser

/// `--transport`: event loops (a few threads, epoll over many non-blocking
/// connections) or the blocking client with one thread per user, kept to
/// compare the two.
enum Transport: String, ExpressibleByArgument, CaseIterable, Sendable {
    case loop
    case threads
}
