//! ringpipe-xml
