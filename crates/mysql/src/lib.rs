//! ringpipe-mysql
