//! The object database as the writers read it: the scan of a checkout's blobs in pack order and
//! their inflation ([`blobs`]), the streaming of big blobs ([`stream`]), and the fetch of the
//! blobs a partial clone lacks before anything is written ([`prefetch`]).

pub(crate) mod blobs;
pub(crate) mod loose;
pub(crate) mod prefetch;
pub(crate) mod stream;
