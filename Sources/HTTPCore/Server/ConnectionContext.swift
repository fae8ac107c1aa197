/// What a handler sees of its connection.
struct ConnectionContext: RequestContext {
    let remoteAddress: String
    let watch: CloseWatch
    let requestNumber: Int
    let workers: ConnectionWorkers

    func onClose(_ handler: @escaping @Sendable () -> Void) {
        watch.add(handler, requestNumber: requestNumber)
    }

    func whileBlockingAllowed<T>(_ body: () throws -> T) rethrows -> T? {
        try workers.whileBlockingAllowed(body)
    }
}
