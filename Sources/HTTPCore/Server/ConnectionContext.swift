/// What a handler sees of its connection.
struct ConnectionContext: RequestContext {
    let remoteAddress: String
    let watch: CloseWatch
    let requestNumber: Int

    func onClose(_ handler: @escaping @Sendable () -> Void) {
        watch.add(handler, requestNumber: requestNumber)
    }
}
